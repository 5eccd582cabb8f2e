import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrangePets, cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { testToken } from '../support/tokens.js';
import { freePort, type GatewayProcess, npmRun, stopAll } from '../support/processes.js';
import { postGraphQL } from '../support/http.js';

/**
 * `npm run deprecations`: who still calls what is deprecated, per element and
 * client, with the calls since the gateway started and the last time seen,
 * read from the real gateway's /metrics, as an operator would before a sunset.
 */

let gateway: GatewayProcess;
let petId: string;

beforeAll(async () => {
  const database = await migratedDatabase();
  petId = (await arrangePets(database.prisma, 1)).pets[0]!.id;
  gateway = await startProcess(database.url, { LEGACY_SUNSET_DATE: '2099-12-31', METRICS_CLIENT_CLAIM: 'azp' });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  stopAll();
  await cleanUp();
});

// Clients are named by their application claim (METRICS_CLIENT_CLAIM), never by the token's subject.
const bearer = async (client: string) => ({
  authorization: `Bearer ${await testToken([], `someone-using-${client}`, { claims: { azp: client } })}`,
});
const metricsUrl = () => `${gateway.baseUrl}/metrics`;

interface Report {
  since: string;
  instances: number;
  rows: Array<{ target: string; client: string; calls: number; refused: number; lastSeen: string }>;
}

describe('npm run deprecations', () => {
  it('says when nothing deprecated was used', async () => {
    const result = await npmRun('deprecations', ['--metrics', metricsUrl()], {});
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/No deprecated element was used since \d{4}-\d{2}-\d{2}T[\d:.]+Z \(when the gateway started\)\./);
  });

  it('lists each client of each deprecated element with its calls and when it was last seen', async () => {
    const before = Date.now();
    for (const subject of ['shop-frontend', 'shop-frontend', 'legacy-app']) {
      await postGraphQL(gateway.baseUrl, { query: 'query ($id: ID!) { getPetById(petId: $id) { id } }', variables: { id: petId } }, await bearer(subject));
    }
    for (let i = 0; i < 3; i++) expect((await fetch(`${gateway.baseUrl}/pets/${petId}`, { headers: await bearer('legacy-app') })).status).toBe(200);
    await fetch(`${gateway.baseUrl}/pets/${petId}`);
    // The replacement is not deprecated, so not listed.
    await postGraphQL(gateway.baseUrl, { query: 'query ($id: ID!) { pet(id: $id) { id } }', variables: { id: petId } }, await bearer('modern-app'));
    const after = Date.now();

    const json = await npmRun('deprecations', ['--metrics', metricsUrl(), '--json'], {});
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout.slice(json.stdout.indexOf('{'))) as Report;
    expect(report.instances).toBe(1);
    expect(Date.parse(report.since)).toBeLessThanOrEqual(before);
    expect(report.rows.map(({ target, client, calls, refused }) => [target, client, calls, refused])).toEqual([
      ['GET /pets/{petId}', 'anonymous', 1, 0],
      ['GET /pets/{petId}', 'legacy-app', 3, 0],
      ['Query.getPetById', 'legacy-app', 1, 0],
      ['Query.getPetById', 'shop-frontend', 2, 0],
    ]);
    for (const row of report.rows) {
      // Seconds as the gauge keeps them: allow the rounding down of the last second.
      expect(Date.parse(row.lastSeen)).toBeGreaterThanOrEqual(before - 1_000);
      expect(Date.parse(row.lastSeen)).toBeLessThanOrEqual(after + 1_000);
    }

    const text = await npmRun('deprecations', ['--metrics', metricsUrl()], {});
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    const header = lines.findIndex((line) => line.startsWith('DEPRECATED'));
    expect(lines[header]).toMatch(/^DEPRECATED\s+CLIENT\s+CALLS\s+REFUSED\s+LAST SEEN \(UTC\)$/);
    expect(lines[header + 2]).toMatch(/^GET \/pets\/\{petId\}\s+legacy-app\s+3\s+0\s+\d{4}-\d{2}-\d{2}T/);
    expect(lines.slice(header + 1, header + 5).join('\n')).toContain('shop-frontend');
  });

  it('adds up several instances, and fails clearly on one it cannot read', async () => {
    const twice = await npmRun('deprecations', ['--metrics', metricsUrl(), '--metrics', metricsUrl(), '--json'], {});
    expect(twice.code, twice.stderr).toBe(0);
    const report = JSON.parse(twice.stdout.slice(twice.stdout.indexOf('{'))) as Report;
    expect(report.instances).toBe(2);
    expect(report.rows.find((row) => row.client === 'legacy-app' && row.target === 'GET /pets/{petId}')?.calls).toBe(6);

    const nobody = `http://127.0.0.1:${await freePort()}/metrics`;
    const failed = await npmRun('deprecations', ['--metrics', nobody], {});
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`Could not read ${nobody}: `);
  });
});
