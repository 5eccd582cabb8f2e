import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withAdmin } from '../support/database.js';
import { cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { testToken } from '../support/tokens.js';
import { pgbouncerAvailable, type PgBouncer, startPgBouncer } from '../support/pgbouncer.js';
import { type GatewayProcess} from '../support/processes.js';
import { postGraphQL } from '../support/http.js';

/**
 * The gateway behind PgBouncer in transaction pooling mode (DATABASE_POOLER=pgbouncer): no startup
 * parameters (PgBouncer refuses them; the statement timeout is the database's own setting), no
 * prepared statements, and transactions, row locks and timeouts working through the pooler.
 */

const haveBouncer = pgbouncerAvailable('the PgBouncer test');
let bouncer: PgBouncer | undefined;
let gateway: GatewayProcess | undefined;
let database: Awaited<ReturnType<typeof migratedDatabase>>;
let baseUrl: string;
let token: string;
let petId: string;

beforeAll(async () => {
  if (!haveBouncer) return;
  database = await migratedDatabase();
  // Behind PgBouncer the statement timeout is the database's (or role's) own setting.
  await withAdmin((admin) => admin.query(`ALTER DATABASE "${database.name}" SET statement_timeout = '1s'`));
  const category = await database.prisma.category.create({ data: { name: 'Bounced' } });
  const pet = await database.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } });
  await database.prisma.inventoryItem.create({ data: { petId: pet.id, quantity: 5, status: 'available' } });
  petId = String(pet.id);
  bouncer = await startPgBouncer();
  gateway = await startProcess(bouncer.urlOf(database.name), {
    DATABASE_POOLER: 'pgbouncer',
    DATABASE_STATEMENT_TIMEOUT_MS: '1000',
    LOG_LEVEL: 'info',
  });
  baseUrl = gateway.baseUrl;
  token = await testToken();
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await bouncer?.stop();
  await cleanUp();
});

const graphql = (query: string, variables?: Record<string, unknown>) =>
  postGraphQL(baseUrl, { query, variables }, { authorization: `Bearer ${token}` });

describe.skipIf(!haveBouncer)('behind PgBouncer in transaction pooling mode', () => {
  it('reads and writes, the same query many times (no prepared statement left on another connection)', async () => {
    for (let i = 0; i < 20; i++) {
      const answer = await graphql('query P($id: ID!) { pet(id: $id) { name inventory { quantity } } }', { id: petId });
      expect(answer.body).toEqual({ data: { pet: { name: 'Rex', inventory: { quantity: 5 } } } });
    }
    const created = await graphql('mutation { createCategory(input: { name: "Through the pooler" }) { name } }');
    expect(created.body).toEqual({ data: { createCategory: { name: 'Through the pooler' } } });
  });

  it('never oversells: 12 concurrent orders for a stock of 5, each in its transaction with the row locked', async () => {
    const order = () => graphql('mutation O($id: ID!) { placeOrder(input: { petId: $id, quantity: 1 }) { id } }', { id: petId });
    const answers = await Promise.all(Array.from({ length: 12 }, order));
    const placed = answers.filter((answer) => answer.body.data?.placeOrder);
    const refused = answers.filter((answer) => answer.body.errors?.[0]?.extensions?.code === 'INSUFFICIENT_STOCK');
    expect(placed).toHaveLength(5);
    expect(refused).toHaveLength(7);
    expect(await database.prisma.inventoryItem.findUnique({ where: { petId: BigInt(petId) } })).toMatchObject({ quantity: 0 });
    expect(await database.prisma.order.count()).toBe(5);
  });

  it("bounds a statement with the database's own timeout: 503 TIMEOUT, and the pooler serves on", async () => {
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
      const started = performance.now();
      // A page of pets reads the table (a count without a filter would read row_counts).
      const blocked = await graphql('{ pets(first: 1) { nodes { id } } }');
      expect(blocked.body.errors?.[0]?.extensions).toMatchObject({ code: 'TIMEOUT', status: 503 });
      expect(performance.now() - started).toBeLessThan(4_000);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect((await graphql('{ pets { totalCount } }')).body).toEqual({ data: { pets: { totalCount: 1 } } });
  });
});
