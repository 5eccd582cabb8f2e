import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';

/**
 * A write answers with the row it wrote, read in its own statements: nothing
 * is read again after its COMMIT to answer the selection (Pothos' select mode
 * would do that for fields it serves by itself, such as t.expose* fields).
 */

const gateway = useTestGateway();
let categoryId = '';

beforeAll(async () => {
  categoryId = (await gateway.prisma.category.create({ data: { name: 'Written' } })).id.toString();
});

describe('statements of a write', () => {
  it('createPet: one INSERT, its own transaction (its foreign key locks the category); nothing after', async () => {
    gateway.statements.length = 0;
    const answer = await gateway.graphql(
      `mutation { createPet(input: { name: "Rex", categoryId: "${categoryId}" }) { id name status categoryId } }`,
    );
    expect(answer.errors).toBeUndefined();
    expect(gateway.statements).toEqual([expect.stringMatching(/^INSERT INTO pets /)]);
  });

  it('updateCategory: no statement reads the category again to answer', async () => {
    gateway.statements.length = 0;
    const answer = await gateway.graphql(
      `mutation { updateCategory(id: "${categoryId}", input: { description: "Good dogs" }) { id name description } }`,
    );
    expect(answer.data).toEqual({ updateCategory: { id: categoryId, name: 'Written', description: 'Good dogs' } });
    expect(gateway.statements).toHaveLength(2);
  });
});
