import { beforeAll, describe, expect, it } from 'vitest';
import { COUNT_LIMIT } from '../../src/pothos-plugins/paging.js';
import { useTestGateway } from '../support/gateway.js';

/**
 * totalCount counts up to COUNT_LIMIT rows, so that its time is bounded by the limit and not by the
 * list; a longer list says COUNT_LIMIT, with totalCountPrecision AT_LEAST. Both engines say the same
 * (the differential compares every answer here with graphql-js').
 */
const gateway = useTestGateway();
let petId = '';

beforeAll(async () => {
  const category = await gateway.prisma.category.create({ data: { name: 'Counted' } });
  const pet = await gateway.prisma.pet.create({ data: { name: 'Popular', categoryId: category.id } });
  petId = String(pet.id);
  await gateway.prisma.$executeRaw`
    INSERT INTO orders (pet_id, quantity, complete) SELECT ${pet.id}, 1, g = 1 FROM generate_series(1, ${COUNT_LIMIT + 1}) AS g`;
  await gateway.prisma.$executeRaw`ANALYZE orders`;
}, 60_000);

interface Counted {
  totalCount: number;
  totalCountPrecision: string;
}

describe('totalCount', () => {
  it('says the limit and AT_LEAST for a list longer than it, on every request (yoga, then the plan)', async () => {
    const text = 'query Long($complete: Boolean) { orders(first: 1, filter: { complete: $complete }) { totalCount totalCountPrecision nodes { id } } }';
    const planned = await gateway.executions('plan');
    for (let time = 0; time < 3; time++) {
      const long = await gateway.graphql<{ orders: Counted }>(text);
      expect(long.errors).toBeUndefined();
      expect(long.data?.orders).toMatchObject({ totalCount: COUNT_LIMIT, totalCountPrecision: 'AT_LEAST' });
      // One order is complete, the rest open: exact below the limit, and at it.
      const short = await gateway.graphql<{ orders: Counted }>(text, { complete: true });
      expect(short.data?.orders).toMatchObject({ totalCount: 1, totalCountPrecision: 'EXACT' });
      const atTheLimit = await gateway.graphql<{ orders: Counted }>(text, { complete: false });
      expect(atTheLimit.data?.orders).toMatchObject({ totalCount: COUNT_LIMIT, totalCountPrecision: 'EXACT' });
    }
    expect(await gateway.executions('plan')).toBeGreaterThan(planned);
    expect(gateway.differential.mismatches).toEqual([]);
  });

  it('tells a relation\'s count the same way, and only the count when only it is asked', async () => {
    const text = 'query Of($id: ID!) { pet(id: $id) { orders { totalCount totalCountPrecision } } orders { totalCountPrecision } }';
    for (let time = 0; time < 2; time++) {
      const answer = await gateway.graphql<{ pet: { orders: Counted }; orders: { totalCountPrecision: string } }>(text, { id: petId });
      expect(answer.errors).toBeUndefined();
      expect(answer.data).toEqual({ pet: { orders: { totalCount: COUNT_LIMIT, totalCountPrecision: 'AT_LEAST' } }, orders: { totalCountPrecision: 'AT_LEAST' } });
    }
    expect(gateway.differential.mismatches).toEqual([]);
  });
});
