import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { legacyPolicy } from '../../src/legacy.js';
import { arrangePets, cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { testToken } from '../support/tokens.js';
import { type GatewayProcess, npmRun, stopAll } from '../support/processes.js';
import { postGraphQL, type GraphQLAnswer } from '../support/http.js';

/**
 * Brownouts: during the LEGACY_BROWNOUTS windows before the sunset, the
 * legacy lookup answers as it will after the sunset (REST 410 GONE, a GONE
 * error for getPetById) with a message naming the sunset date and the
 * replacement; outside them it answers. Each refusal is logged and counted
 * per client. Driven through the real server process, as operators run it.
 */

const SUNSET = '2099-12-31';
const minute = (offsetMs: number) => `${new Date(Date.now() + offsetMs).toISOString().slice(0, 16)}Z`;

let inBrownout: GatewayProcess;
let outside: GatewayProcess;
let petId: string;
const laterWindow = '2099-06-01T14:00Z/PT2H';

beforeAll(async () => {
  const database = await migratedDatabase();
  petId = (await arrangePets(database.prisma, 1)).pets[0]!.id;
  const current = `${minute(-60_000)}/PT2H`;
  [inBrownout, outside] = await Promise.all([
    startProcess(database.url, { LEGACY_SUNSET_DATE: SUNSET, LEGACY_BROWNOUTS: `${laterWindow}, ${current}`, METRICS_CLIENT_CLAIM: 'azp' }),
    startProcess(database.url, { LEGACY_SUNSET_DATE: SUNSET, LEGACY_BROWNOUTS: laterWindow, METRICS_CLIENT_CLAIM: 'azp' }),
  ]);
}, 90_000);

afterAll(async () => {
  await Promise.all([inBrownout?.stop(), outside?.stop()]);
  stopAll();
  await cleanUp();
});

// Clients are named by their application claim (METRICS_CLIENT_CLAIM), never by the token's subject.
const bearer = async (client: string) => ({
  authorization: `Bearer ${await testToken([], `someone-using-${client}`, { claims: { azp: client } })}`,
});
const legacyQuery = 'query Legacy($id: ID!) { getPetById(petId: $id) { id } pet(id: $id) { id } }';

async function metricValue(gateway: GatewayProcess, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith(`${name}{${labels}}`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('during a brownout window', () => {
  it('GET /pets/{petId} answers 410 GONE naming the sunset date and the replacement, with the deprecation headers', async () => {
    const response = await fetch(`${inBrownout.baseUrl}/pets/${petId}`);
    expect(response.status).toBe(410);
    const body = (await response.json()) as { code: string; message: string; status: number };
    expect(body).toMatchObject({ code: 'GONE', status: 410 });
    expect(body.message).toMatch(/^GET \/pets\/\{petId\} is browned out until \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\.000Z/);
    expect(body.message).toContain(`retirement on ${SUNSET}`);
    expect(body.message).toContain('Use the GraphQL query pet(id:) at /graphql.');
    expect(response.headers.get('sunset')).toBe('Thu, 31 Dec 2099 00:00:00 GMT');
    expect(response.headers.get('deprecation')).toMatch(/^@\d+$/);
  });

  it('getPetById is a GONE error with the same message, while pet(id:) answers', async () => {
    const answer = await postGraphQL<GraphQLAnswer<{ getPetById: null; pet: { id: string } }>>(inBrownout.baseUrl, { query: legacyQuery, variables: { id: petId } }, await bearer('brownout-client'));
    const body = answer.body as { data: unknown; errors: Array<{ message: string; path: string[]; extensions: { code: string } }> };
    expect(body.data).toEqual({ getPetById: null, pet: { id: petId } });
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]).toMatchObject({ path: ['getPetById'], extensions: { code: 'GONE' } });
    expect(body.errors[0]!.message).toMatch(/^getPetById is browned out until .*retirement on 2099-12-31.*pet\(id:\)/);
  });

  it('leaves GET /store/orders answering', async () => {
    const token = `Bearer ${await testToken(['orders:read'], 'orders-reader')}`;
    expect((await fetch(`${inBrownout.baseUrl}/store/orders`, { headers: { authorization: token } })).status).toBe(200);
  });

  it('counts and logs each refusal per client', async () => {
    const refusals = 'petstore_legacy_refusals_total';
    const rest = 'target="GET /pets/{petId}",client="rest-caller",reason="brownout"';
    const graphql = 'target="Query.getPetById",client="graphql-caller",reason="brownout"';
    const [restBefore, graphqlBefore] = [await metricValue(inBrownout, refusals, rest), await metricValue(inBrownout, refusals, graphql)];
    for (let i = 0; i < 2; i++) {
      expect((await fetch(`${inBrownout.baseUrl}/pets/${petId}`, { headers: await bearer('rest-caller') })).status).toBe(410);
    }
    await postGraphQL(inBrownout.baseUrl, { query: legacyQuery, variables: { id: petId } }, await bearer('graphql-caller'));
    expect(await metricValue(inBrownout, refusals, rest)).toBe(restBefore + 2);
    expect(await metricValue(inBrownout, refusals, graphql)).toBe(graphqlBefore + 1);
    const lines = inBrownout
      .output()
      .split('\n')
      .filter((line) => line.includes('legacy lookup refused: brownout'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toContainEqual(expect.objectContaining({ target: 'GET /pets/{petId}', client: 'rest-caller', reason: 'brownout' }));
    expect(lines).toContainEqual(
      expect.objectContaining({ target: 'Query.getPetById', client: 'graphql-caller', reason: 'brownout', requestId: expect.any(String) }),
    );
    // And `npm run deprecations` shows the refused calls beside the calls.
    const report = await npmRun('deprecations', ['--metrics', `${inBrownout.baseUrl}/metrics`, '--json'], {});
    expect(report.code, report.stderr).toBe(0);
    const rows = (JSON.parse(report.stdout.slice(report.stdout.indexOf('{'))) as { rows: Array<Record<string, unknown>> }).rows;
    expect(rows).toContainEqual(expect.objectContaining({ target: 'GET /pets/{petId}', client: 'rest-caller', calls: 2, refused: 2 }));
    expect(rows).toContainEqual(expect.objectContaining({ target: 'Query.getPetById', client: 'graphql-caller', calls: 1, refused: 1 }));
  });
});

describe('outside the brownout windows', () => {
  it('the legacy lookup answers normally, and the OpenAPI document lists the scheduled windows', async () => {
    const response = await fetch(`${outside.baseUrl}/pets/${petId}`);
    expect(response.status).toBe(200);
    const answer = await postGraphQL(outside.baseUrl, { query: legacyQuery, variables: { id: petId } });
    expect(answer.body).toMatchObject({ data: { getPetById: { id: petId }, pet: { id: petId } } });
    expect(answer.body.errors).toBeUndefined();
    const document = (await (await fetch(`${outside.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, { get: { description: string } }>;
    };
    expect(document.paths['/pets/{petId}']!.get.description).toContain(
      'during scheduled brownouts (UTC): 2099-06-01T14:00:00.000Z to 2099-06-01T16:00:00.000Z.',
    );
  });
});

describe('the windows', () => {
  it('start at their first minute and end just before their last', () => {
    const policy = legacyPolicy(
      { sunsetDate: SUNSET, afterSunset: 'gone', brownouts: loadConfig({ LEGACY_SUNSET_DATE: SUNSET, LEGACY_BROWNOUTS: laterWindow }).legacy.brownouts },
      { successor: '/graphql', policy: '/openapi.json' },
    );
    const caller = { client: 'edge' };
    const start = Date.UTC(2099, 5, 1, 14);
    expect(() => policy.refuseWhenRetired('GET /pets/{petId}', caller, start - 1)).not.toThrow();
    expect(() => policy.refuseWhenRetired('GET /pets/{petId}', caller, start)).toThrow(/browned out until 2099-06-01T16:00:00.000Z/);
    expect(() => policy.refuseWhenRetired('GET /pets/{petId}', caller, start + 2 * 3_600_000 - 1)).toThrow(/browned out/);
    expect(() => policy.refuseWhenRetired('GET /pets/{petId}', caller, start + 2 * 3_600_000)).not.toThrow();
  });
});

describe('the LEGACY_BROWNOUTS setting', () => {
  it('is none unless set, and takes START/END or START/DURATION windows in UTC', () => {
    expect(loadConfig({}).legacy.brownouts).toEqual([]);
    expect(
      loadConfig({ LEGACY_BROWNOUTS: '2027-05-04T14:00Z/PT2H30M, 2027-06-01T09:00:00Z/2027-06-01T10:00Z' }).legacy.brownouts,
    ).toEqual([
      { start: new Date('2027-05-04T14:00Z'), end: new Date('2027-05-04T16:30Z') },
      { start: new Date('2027-06-01T09:00Z'), end: new Date('2027-06-01T10:00Z') },
    ]);
  });

  it('refuses each bad window with a message naming it and what is accepted', () => {
    const problems = (settings: Record<string, string>) => {
      try {
        loadConfig(settings);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
      throw new Error('accepted');
    };
    expect(problems({ LEGACY_BROWNOUTS: 'tuesday afternoon, 2027-05-04T14:00/PT2H' })).toEqual([
      'LEGACY_BROWNOUTS: "tuesday afternoon" is not a window START/END or START/DURATION in UTC (e.g. 2027-05-04T14:00Z/PT2H or 2027-05-04T14:00Z/2027-05-04T16:00Z)',
      'LEGACY_BROWNOUTS: "2027-05-04T14:00/PT2H" is not a window START/END or START/DURATION in UTC (e.g. 2027-05-04T14:00Z/PT2H or 2027-05-04T14:00Z/2027-05-04T16:00Z)',
    ]);
    expect(problems({ LEGACY_BROWNOUTS: '2027-05-04T14:00Z/2 hours' })[0]).toBe(
      'LEGACY_BROWNOUTS: "2027-05-04T14:00Z/2 hours" does not end with a UTC time or a duration such as PT2H (e.g. 2027-05-04T14:00Z/PT2H or 2027-05-04T14:00Z/2027-05-04T16:00Z)',
    );
    expect(problems({ LEGACY_BROWNOUTS: '2027-02-30T14:00Z/PT1H' })).toEqual(['LEGACY_BROWNOUTS: "2027-02-30T14:00Z/PT1H" is not a real date and time']);
    expect(problems({ LEGACY_BROWNOUTS: '2027-05-04T14:00Z/2027-05-04T13:00Z' })).toEqual([
      'LEGACY_BROWNOUTS: "2027-05-04T14:00Z/2027-05-04T13:00Z" ends before it starts',
    ]);
    expect(problems({ LEGACY_BROWNOUTS: '2027-05-04T14:00Z/PT25H' })[0]).toMatch(/is longer than 24 hours/);
    expect(problems({ LEGACY_BROWNOUTS: '2027-06-29T23:00Z/PT2H' })).toEqual([
      'LEGACY_BROWNOUTS: "2027-06-29T23:00Z/PT2H" ends after the sunset date 2027-06-30 (LEGACY_SUNSET_DATE): brownouts come before it',
    ]);
    expect(problems({ LEGACY_BROWNOUTS: '2027-05-04T14:00Z/PT2H', LEGACY_AFTER_SUNSET: 'serve' })[0]).toMatch(
      /^LEGACY_BROWNOUTS rehearse the 410 .* LEGACY_AFTER_SUNSET=serve keeps it answering then/,
    );
  });
});
