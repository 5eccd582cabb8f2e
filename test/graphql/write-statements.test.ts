import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';

/**
 * A write answers with the row it wrote, read in its own statements: nothing
 * is read again after its COMMIT to answer the selection (Pothos' select mode
 * would do that for fields it serves by itself, such as t.expose* fields). The
 * catalogue's writes are one statement each when the answer selects no relation.
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

  it('createCategory: one INSERT (the unique index decides whether the name is taken); nothing after', async () => {
    gateway.statements.length = 0;
    const answer = await gateway.graphql<{ createCategory: { id: string } }>(
      'mutation { createCategory(input: { name: "Statements", description: "One" }) { id name description } }',
    );
    expect(answer.data).toEqual({ createCategory: { id: expect.stringMatching(/^\d+$/), name: 'Statements', description: 'One' } });
    expect(gateway.statements).toEqual([expect.stringMatching(/^INSERT INTO categories /)]);
    // Refused by the index: one statement too.
    gateway.statements.length = 0;
    const taken = await gateway.graphql('mutation { createCategory(input: { name: "Statements" }) { id } }');
    expect(taken.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT' });
    expect(gateway.statements).toHaveLength(1);
  });

  it('updateCategory: one UPDATE, which answers; nothing reads the category again', async () => {
    gateway.statements.length = 0;
    const answer = await gateway.graphql(
      `mutation { updateCategory(id: "${categoryId}", input: { description: "Good dogs" }) { id name description } }`,
    );
    expect(answer.data).toEqual({ updateCategory: { id: categoryId, name: 'Written', description: 'Good dogs' } });
    expect(gateway.statements).toEqual([expect.stringMatching(/^UPDATE categories /)]);
    // With nothing to change: one read, no write.
    gateway.statements.length = 0;
    const unchanged = await gateway.graphql(`mutation { updateCategory(id: "${categoryId}", input: {}) { id name description } }`);
    expect(unchanged.data).toEqual({ updateCategory: { id: categoryId, name: 'Written', description: 'Good dogs' } });
    expect(gateway.statements).toEqual([expect.stringMatching(/^SELECT /)]);
  });

  it('deleteCategory: one statement (delete_category) without a relation selected; with one, the read first in its transaction', async () => {
    const ids = [];
    for (const name of ['Gone 1', 'Gone 2']) ids.push((await gateway.prisma.category.create({ data: { name } })).id.toString());
    gateway.statements.length = 0;
    const answer = await gateway.graphql(`mutation { deleteCategory(id: "${ids[0]}") { id name description } }`);
    expect(answer.data).toEqual({ deleteCategory: { id: ids[0], name: 'Gone 1', description: null } });
    expect(gateway.statements).toEqual([expect.stringMatching(/delete_category\(/)]);
    gateway.statements.length = 0;
    const withPets = await gateway.graphql(`mutation { deleteCategory(id: "${ids[1]}") { id name pets { totalCount } } }`);
    expect(withPets.data).toEqual({ deleteCategory: { id: ids[1], name: 'Gone 2', pets: { totalCount: 0 } } });
    // The lock, the read with its relation, the function, COMMIT (Prisma's query events leave out BEGIN).
    expect(gateway.statements).toEqual([/FOR UPDATE$/, /^SELECT /, /delete_category\(/, /^COMMIT$/].map((sql) => expect.stringMatching(sql)));
  });

  it('deletePet: one statement (delete_pet) without a relation selected; with one, the read first in its transaction', async () => {
    const ids = [];
    for (const name of ['Goner 1', 'Goner 2']) {
      const pet = await gateway.prisma.pet.create({ data: { name, categoryId: BigInt(categoryId) } });
      await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity: 0, status: 'sold' } });
      await gateway.prisma.order.create({ data: { petId: pet.id, quantity: 1, complete: true } });
      ids.push(pet.id.toString());
    }
    gateway.statements.length = 0;
    const answer = await gateway.graphql(`mutation { deletePet(id: "${ids[0]}") { id name status categoryId } }`);
    expect(answer.data).toEqual({ deletePet: { id: ids[0], name: 'Goner 1', status: 'AVAILABLE', categoryId } });
    expect(gateway.statements).toEqual([expect.stringMatching(/delete_pet\(/)]);
    gateway.statements.length = 0;
    const withCategory = await gateway.graphql(`mutation { deletePet(id: "${ids[1]}") { id category { name } inventory { quantity } } }`);
    expect(withCategory.data).toEqual({ deletePet: { id: ids[1], category: { name: 'Written' }, inventory: { quantity: 0 } } });
    expect(gateway.statements).toEqual([/FOR UPDATE$/, /^SELECT /, /delete_pet\(/, /^COMMIT$/].map((sql) => expect.stringMatching(sql)));
    expect(await gateway.prisma.pet.count({ where: { id: { in: ids.map(BigInt) } } })).toBe(0);
    expect(await gateway.prisma.order.count({ where: { petId: { in: ids.map(BigInt) } } })).toBe(0);
    expect(await gateway.prisma.inventoryItem.count({ where: { petId: { in: ids.map(BigInt) } } })).toBe(0);
  });
});
