import { describe, expect, it, onTestFinished } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { arrangePets } from '../support/operations.js';
import { subscribeSse } from '../support/subscriptions.js';
import { testToken } from '../support/tokens.js';

/**
 * A live query spends its client's cost budget: its estimate when it
 * subscribes, then the actual cost of each run a write causes. Once the budget
 * no longer holds a run, the client gets THROTTLED (429) in the documented
 * shape and its live query ends; another client's goes on. The budget here
 * barely refills, so each spend shows.
 */

const gateway = useTestGateway({
  liveQueries: { minIntervalMs: 50 },
  limits: { costBudget: { capacity: 200, refillPerSecond: 0.001, onRedisFailure: 'local' } },
});

/** A page of 50 pets (estimated 51 points), of which 30 exist: each run costs what it returned. */
const PAGE = 'query Page @live { pets(first: 50) { nodes { id name } } }';
type Page = { pets: { nodes: Array<{ id: string; name: string }> } };
const nameIn = (page: unknown, id: string) => (page as Page).pets.nodes.find((pet) => pet.id === id)?.name;

describe('a live query and the cost budget', () => {
  it('spends each run of its client, and ends with THROTTLED once the budget does not hold one', { timeout: 30_000 }, async () => {
    const { pets } = await arrangePets(gateway.prisma, ...Array.from({ length: 30 }, () => 1));
    const pet = pets[0]!;
    const spender = await subscribeSse<Page>(`${gateway.baseUrl}/graphql`, PAGE, { token: await testToken([], 'live-spender') });
    onTestFinished(() => spender.close());
    expect(nameIn((await spender.next()).data, pet.id)).toBe(pet.name);

    // Each rename is a run of the live query; the writer has a budget of its own.
    const writer = await testToken(['catalog:write'], 'live-writer');
    const rename = async (name: string) => {
      const answer = await gateway.graphql('mutation ($id: ID!, $n: String!) { updatePet(id: $id, input: { name: $n }) { id } }', { id: pet.id, n: name }, { token: writer });
      expect(answer.errors).toBeUndefined();
    };
    const seen: Array<{ data?: unknown; errors?: Array<{ extensions?: Record<string, unknown> }> }> = [];
    for (let n = 1; n <= 12; n++) {
      await rename(`Renamed ${n}`);
      const next = await spender.next();
      seen.push(next);
      if (next.errors) break;
    }
    const throttled = seen.at(-1)!;
    // Subscribing spent its estimate, each run its actual cost: the budget of 200 held some runs, not twelve.
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.length).toBeLessThan(12);
    expect(seen.slice(0, -1).every((answer) => answer.errors === undefined)).toBe(true);
    expect(throttled.errors?.[0]?.extensions).toMatchObject({ code: 'THROTTLED', status: 429 });
    expect(await spender.ended).toEqual({ kind: 'complete' });

    // Another client's budget is its own: its live query of the same pet answers and follows the next write.
    const other = await subscribeSse<Page>(`${gateway.baseUrl}/graphql`, PAGE, { token: await testToken([], 'live-other') });
    expect(nameIn((await other.next()).data, pet.id)).toBe(`Renamed ${seen.length}`);
    await rename('Renamed once more');
    expect(nameIn((await other.next()).data, pet.id)).toBe('Renamed once more');
    await other.close();
  });
});
