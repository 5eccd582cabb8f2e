import { beforeAll, describe, expect, it } from 'vitest';
import {
  CategoryByIdDocument,
  CreateCategoryDocument,
  CreatePetDocument,
  DeleteCategoryDocument,
  DeletePetDocument,
  PetByIdDocument,
  UpdateCategoryDocument,
  UpdatePetDocument,
} from '../generated/graphql.js';
import { clientFor, codesOf, expectError } from '../support/client.js';
import { useTestGateway } from '../support/gateway.js';

/** Categories and pets: every write, what it stores, and what it refuses. */
const gateway = useTestGateway();
const client = clientFor(gateway);
const db = () => gateway.prisma;

let dogs = '';
beforeAll(async () => {
  dogs = (await db().category.create({ data: { name: 'Dogs' } })).id.toString();
});

async function category(name: string, description?: string) {
  return (await client.ok(CreateCategoryDocument, { input: { name, description } })).createCategory;
}

async function pet(name: string, categoryId = dogs, status?: 'AVAILABLE' | 'PENDING' | 'SOLD') {
  return (await client.ok(CreatePetDocument, { input: { name, categoryId, status } })).createPet;
}

describe('createCategory', () => {
  it('adds a category, its name trimmed, and stores it', async () => {
    const created = await category('  Rabbits  ', 'Long ears');
    expect(created).toEqual({ id: expect.stringMatching(/^\d+$/), name: 'Rabbits', description: 'Long ears' });
    const stored = await db().category.findUniqueOrThrow({ where: { id: BigInt(created.id) } });
    expect(stored).toMatchObject({ name: 'Rabbits', description: 'Long ears' });
  });

  it('adds a category without a description', async () => {
    const created = await category('Hamsters');
    expect(created.description).toBeNull();
  });

  it('refuses a name that is taken (also once trimmed), and writes nothing', async () => {
    const before = await db().category.count();
    for (const name of ['Dogs', ' Dogs ']) {
      const response = await client.send(CreateCategoryDocument, { input: { name } });
      const error = expectError(response, 'CONFLICT');
      expect(error.message).toBe('A category named "Dogs" already exists.');
      expect(response.data).toBeNull();
    }
    expect(await db().category.count()).toBe(before);
  });
});

describe('updateCategory', () => {
  it('renames a category and changes its description', async () => {
    const created = await category('Ferrets', 'Small');
    const { updateCategory } = await client.ok(UpdateCategoryDocument, {
      id: created.id,
      input: { name: ' Polecats ', description: 'Small and quick' },
    });
    expect(updateCategory).toEqual({ id: created.id, name: 'Polecats', description: 'Small and quick' });
    expect(await db().category.findUnique({ where: { id: BigInt(created.id) } })).toMatchObject({
      name: 'Polecats',
      description: 'Small and quick',
    });
  });

  it('leaves out fields that are not given, and clears the description when given null', async () => {
    const created = await category('Turtles', 'Slow');
    const renamed = await client.ok(UpdateCategoryDocument, { id: created.id, input: { name: 'Tortoises' } });
    expect(renamed.updateCategory.description).toBe('Slow');
    const cleared = await client.ok(UpdateCategoryDocument, { id: created.id, input: { description: null } });
    expect(cleared.updateCategory).toEqual({ id: created.id, name: 'Tortoises', description: null });
  });

  it('keeps its own name, but refuses one another category has', async () => {
    const created = await category('Lizards');
    const same = await client.ok(UpdateCategoryDocument, { id: created.id, input: { name: 'Lizards' } });
    expect(same.updateCategory.name).toBe('Lizards');
    const error = expectError(await client.send(UpdateCategoryDocument, { id: created.id, input: { name: ' Dogs ' } }), 'CONFLICT');
    expect(error.message).toBe('A category named "Dogs" already exists.');
    expect((await db().category.findUniqueOrThrow({ where: { id: BigInt(created.id) } })).name).toBe('Lizards');
  });

  it('with nothing to change, returns the category as it is and writes nothing', async () => {
    const created = await category('Geckos', 'Sticky feet');
    const before = await db().category.findUniqueOrThrow({ where: { id: BigInt(created.id) } });
    const { updateCategory } = await client.ok(UpdateCategoryDocument, { id: created.id, input: {} });
    expect(updateCategory).toEqual(created);
    expect(await db().category.findUniqueOrThrow({ where: { id: BigInt(created.id) } })).toEqual(before);
    expect(expectError(await client.send(UpdateCategoryDocument, { id: '424242', input: {} }), 'NOT_FOUND').message).toBe(
      'Category 424242 does not exist.',
    );
  });

  it('answers NOT_FOUND for a category that does not exist', async () => {
    const error = expectError(await client.send(UpdateCategoryDocument, { id: '424242', input: { name: 'Ghosts' } }), 'NOT_FOUND');
    expect(error.message).toBe('Category 424242 does not exist.');
    // Also for a name another category has: there is no category to rename.
    expectError(await client.send(UpdateCategoryDocument, { id: '424242', input: { name: 'Dogs' } }), 'NOT_FOUND');
    expect(await db().category.count({ where: { name: 'Ghosts' } })).toBe(0);
  });
});

describe('deleteCategory', () => {
  it('removes an empty category and returns it as it was', async () => {
    const created = await category('Snakes', 'No legs');
    const { deleteCategory } = await client.ok(DeleteCategoryDocument, { id: created.id });
    expect(deleteCategory).toEqual({ ...created, pets: { totalCount: 0 } });
    expect(await db().category.findUnique({ where: { id: BigInt(created.id) } })).toBeNull();
    expect(await client.send(CategoryByIdDocument, { id: created.id })).toEqual({ data: { category: null } });
  });

  it('removes it in one statement when the answer selects none of its relations', async () => {
    const created = await category('Newts', 'Wet');
    const answer = await gateway.graphql(`mutation { deleteCategory(id: "${created.id}") { id name description } }`);
    expect(answer).toEqual({ data: { deleteCategory: created } });
    expect(await db().category.findUnique({ where: { id: BigInt(created.id) } })).toBeNull();
  });

  it('refuses while a pet belongs to it, and keeps both', async () => {
    const created = await category('Parrots');
    const polly = await pet('Polly', created.id);
    const error = expectError(await client.send(DeleteCategoryDocument, { id: created.id }), 'CONFLICT');
    expect(error.message).toBe(`Category ${created.id} still has 1 pet; move or delete them first.`);
    await pet('Coco', created.id);
    const without = await gateway.graphql(`mutation { deleteCategory(id: "${created.id}") { id } }`);
    expect(expectError(without, 'CONFLICT').message).toBe(`Category ${created.id} still has 2 pets; move or delete them first.`);
    expect(await db().category.findUnique({ where: { id: BigInt(created.id) } })).not.toBeNull();
    expect(await db().pet.findUnique({ where: { id: BigInt(polly.id) } })).not.toBeNull();
  });

  it('answers NOT_FOUND for a category that does not exist', async () => {
    expect(expectError(await client.send(DeleteCategoryDocument, { id: '424242' }), 'NOT_FOUND').message).toBe('Category 424242 does not exist.');
    expectError(await gateway.graphql('mutation { deleteCategory(id: "424242") { id } }'), 'NOT_FOUND');
  });
});

describe('createPet', () => {
  it('adds an available pet to an existing category, its name trimmed', async () => {
    const created = await pet('  Rex ');
    expect(created).toEqual({
      id: expect.stringMatching(/^\d+$/),
      name: 'Rex',
      categoryId: dogs,
      status: 'AVAILABLE',
      category: { id: dogs, name: 'Dogs' },
      inventory: null,
    });
    expect(await db().pet.findUnique({ where: { id: BigInt(created.id) } })).toMatchObject({
      name: 'Rex',
      categoryId: BigInt(dogs),
      status: 'available',
    });
  });

  it('keeps the status it is given', async () => {
    expect((await pet('Old Rex', dogs, 'SOLD')).status).toBe('SOLD');
    expect((await pet('Waiting Rex', dogs, 'PENDING')).status).toBe('PENDING');
  });

  it('answers NOT_FOUND for a category that does not exist, and writes nothing', async () => {
    const before = await db().pet.count();
    const response = await client.send(CreatePetDocument, { input: { name: 'Orphan', categoryId: '424242' } });
    expect(expectError(response, 'NOT_FOUND').message).toContain('424242');
    expect(await db().pet.count()).toBe(before);
  });
});

describe('updatePet', () => {
  it("changes a pet's name and category", async () => {
    const cats = await category('Cats');
    const created = await pet('Tom');
    const { updatePet } = await client.ok(UpdatePetDocument, {
      id: created.id,
      input: { name: ' Thomas ', categoryId: cats.id },
    });
    expect(updatePet).toEqual({
      id: created.id,
      name: 'Thomas',
      categoryId: cats.id,
      status: 'AVAILABLE',
      category: { name: 'Cats' },
    });
  });

  it('sets the status of a pet that has no inventory entry', async () => {
    const created = await pet('Lassie');
    const { updatePet } = await client.ok(UpdatePetDocument, { id: created.id, input: { status: 'PENDING' } });
    expect(updatePet.status).toBe('PENDING');
    const { pet: read } = await client.ok(PetByIdDocument, { id: created.id });
    expect(read?.status).toBe('PENDING');
  });

  it('refuses to set the status of a pet with an inventory entry: its stock decides', async () => {
    const created = await pet('Stocked');
    await db().inventoryItem.create({ data: { petId: BigInt(created.id), quantity: 2, status: 'available' } });
    const response = await client.send(UpdatePetDocument, {
      id: created.id,
      input: { status: 'SOLD', name: 'Renamed' },
    });
    expectError(response, 'CONFLICT');
    const stored = await db().pet.findUniqueOrThrow({ where: { id: BigInt(created.id) } });
    expect(stored).toMatchObject({ status: 'available', name: 'Stocked' });
  });

  it('answers NOT_FOUND for a missing pet, or a missing category, and writes nothing', async () => {
    expectError(await client.send(UpdatePetDocument, { id: '424242', input: { name: 'Nobody' } }), 'NOT_FOUND');
    const created = await pet('Homebody');
    expectError(
      await client.send(UpdatePetDocument, { id: created.id, input: { name: 'Wanderer', categoryId: '424242' } }),
      'NOT_FOUND',
    );
    expect(await db().pet.findUniqueOrThrow({ where: { id: BigInt(created.id) } })).toMatchObject({
      name: 'Homebody',
      categoryId: BigInt(dogs),
    });
  });
});

describe('deletePet', () => {
  it('removes a pet with its stock entry and finished orders, and returns it as it was', async () => {
    const created = await pet('Goner');
    const id = BigInt(created.id);
    await db().inventoryItem.create({ data: { petId: id, quantity: 0, status: 'sold' } });
    await db().order.create({ data: { petId: id, quantity: 1, complete: true } });
    await db().pet.update({ where: { id }, data: { status: 'sold' } });

    const { deletePet } = await client.ok(DeletePetDocument, { id: created.id });
    expect(deletePet).toEqual({
      id: created.id,
      name: 'Goner',
      status: 'SOLD',
      category: { name: 'Dogs' },
      inventory: { quantity: 0 },
    });
    expect(await db().pet.findUnique({ where: { id } })).toBeNull();
    expect(await db().inventoryItem.findUnique({ where: { petId: id } })).toBeNull();
    expect(await db().order.count({ where: { petId: id } })).toBe(0);
    expect(await client.send(PetByIdDocument, { id: created.id })).toEqual({ data: { pet: null } });
  });

  it('refuses while the pet has an open order, and keeps everything', async () => {
    const created = await pet('Busy');
    const id = BigInt(created.id);
    await db().inventoryItem.create({ data: { petId: id, quantity: 1, status: 'available' } });
    await db().order.create({ data: { petId: id, quantity: 1, complete: true } });
    await db().order.create({ data: { petId: id, quantity: 1 } });

    const error = expectError(await client.send(DeletePetDocument, { id: created.id }), 'CONFLICT');
    expect(error.message).toBe(`Pet ${id} has 1 open order; complete or cancel them first.`);
    await db().order.create({ data: { petId: id, quantity: 1 } });
    const without = await gateway.graphql(`mutation { deletePet(id: "${id}") { id name } }`);
    expect(expectError(without, 'CONFLICT').message).toBe(`Pet ${id} has 2 open orders; complete or cancel them first.`);
    expect(await db().pet.findUnique({ where: { id } })).not.toBeNull();
    expect(await db().inventoryItem.findUnique({ where: { petId: id } })).not.toBeNull();
    expect(await db().order.count({ where: { petId: id } })).toBe(3);
  });

  it('removes it in one statement when the answer selects none of its relations, with its stock entry and finished orders', async () => {
    const created = await pet('Quick goner', dogs, 'PENDING');
    const id = BigInt(created.id);
    await db().order.create({ data: { petId: id, quantity: 1, complete: true } });
    const answer = await gateway.graphql(`mutation { deletePet(id: "${id}") { id name status categoryId } }`);
    expect(answer).toEqual({ data: { deletePet: { id: created.id, name: 'Quick goner', status: 'PENDING', categoryId: dogs } } });
    expect(await db().pet.findUnique({ where: { id } })).toBeNull();
    expect(await db().order.count({ where: { petId: id } })).toBe(0);
  });

  it('answers NOT_FOUND for a pet that does not exist', async () => {
    expect(expectError(await client.send(DeletePetDocument, { id: '424242' }), 'NOT_FOUND').message).toBe('Pet 424242 does not exist.');
    expectError(await gateway.graphql('mutation { deletePet(id: "424242") { id } }'), 'NOT_FOUND');
  });
});

/** The two ways a delete runs: one statement, or (a relation selected) the read first in its transaction. */
const deleteSelections = [
  ['in one statement', 'id name'],
  ['with a relation read first', 'id name pets { totalCount }'],
] as const;

describe('createPet and deleteCategory at the same time', () => {
  it.each(deleteSelections)('a pet added while its category is deleted (%s) either wins (the delete is refused) or finds no category', async (_way, selection) => {
    for (let round = 0; round < 10; round++) {
      const category = (await gateway.prisma.category.create({ data: { name: `Kind ${selection} ${round}` } })).id.toString();
      const [created, deleted] = await Promise.all([
        client.send(CreatePetDocument, { input: { name: 'Newcomer', categoryId: category } }),
        gateway.graphql(`mutation Drop($id: ID!) { deleteCategory(id: $id) { ${selection} } }`, { id: category }),
      ]);
      const outcome = codesOf([created, deleted]).join(' ');
      expect(['OK CONFLICT', 'NOT_FOUND OK']).toContain(outcome);
      const left = await gateway.prisma.category.count({ where: { id: BigInt(category) } });
      const pets = await gateway.prisma.pet.count({ where: { categoryId: BigInt(category) } });
      expect({ outcome, left, pets }).toEqual(
        outcome === 'OK CONFLICT' ? { outcome, left: 1, pets: 1 } : { outcome, left: 0, pets: 0 },
      );
      if (outcome === 'OK CONFLICT') expect(deleted.errors?.[0]?.message).toBe(`Category ${category} still has 1 pet; move or delete them first.`);
      else expect(created.errors?.[0]?.message).toBe(`Category ${category} does not exist.`);
    }
  });

  it('a pet moved into a category while it is deleted either wins (the delete is refused) or finds no category', async () => {
    for (let round = 0; round < 10; round++) {
      const category = (await gateway.prisma.category.create({ data: { name: `Destination ${round}` } })).id.toString();
      const mover = await pet(`Mover ${round}`);
      const [moved, deleted] = await Promise.all([
        gateway.graphql('mutation Move($id: ID!, $c: ID!) { updatePet(id: $id, input: { categoryId: $c }) { id categoryId } }', { id: mover.id, c: category }),
        gateway.graphql('mutation Drop($id: ID!) { deleteCategory(id: $id) { id } }', { id: category }),
      ]);
      const outcome = codesOf([moved, deleted]).join(' ');
      expect(['OK CONFLICT', 'NOT_FOUND OK']).toContain(outcome);
      const left = await gateway.prisma.category.count({ where: { id: BigInt(category) } });
      const stored = await gateway.prisma.pet.findUniqueOrThrow({ where: { id: BigInt(mover.id) } });
      expect({ left, categoryId: String(stored.categoryId) }).toEqual(outcome === 'OK CONFLICT' ? { left: 1, categoryId: category } : { left: 0, categoryId: dogs });
    }
  });
});

describe('placeOrder and deletePet at the same time', () => {
  it.each([
    ['in one statement', 'id name'],
    ['with a relation read first', 'id name category { name } inventory { quantity }'],
  ] as const)('an order placed while its pet is deleted (%s) either wins (the delete is refused) or finds no pet: never an order for a pet gone', async (_way, selection) => {
    for (let round = 0; round < 10; round++) {
      const wanted = await db().pet.create({ data: { name: `Wanted ${round}`, categoryId: BigInt(dogs) } });
      await db().inventoryItem.create({ data: { petId: wanted.id, quantity: 5, status: 'available' } });
      const id = String(wanted.id);
      const [ordered, deleted] = await Promise.all([
        gateway.graphql('mutation Order($p: ID!) { placeOrder(input: { petId: $p, quantity: 1 }) { id petId } }', { p: id }),
        gateway.graphql(`mutation Drop($id: ID!) { deletePet(id: $id) { ${selection} } }`, { id }),
      ]);
      const outcome = codesOf([ordered, deleted]).join(' ');
      expect(['OK CONFLICT', 'NOT_FOUND OK']).toContain(outcome);
      const left = await db().pet.count({ where: { id: wanted.id } });
      const orders = await db().order.count({ where: { petId: wanted.id } });
      const stock = (await db().inventoryItem.findUnique({ where: { petId: wanted.id } }))?.quantity ?? null;
      expect({ outcome, left, orders, stock }).toEqual(
        outcome === 'OK CONFLICT' ? { outcome, left: 1, orders: 1, stock: 4 } : { outcome, left: 0, orders: 0, stock: null },
      );
      if (outcome === 'OK CONFLICT') expect(deleted.errors?.[0]?.message).toBe(`Pet ${id} has 1 open order; complete or cancel them first.`);
      else expect(ordered.errors?.[0]?.message).toBe(`Pet ${id} does not exist.`);
    }
  });
});

describe('createCategory and updateCategory with one name at the same time', () => {
  it('two categories added with one name: exactly one is written, the other is refused CONFLICT', async () => {
    for (let round = 0; round < 10; round++) {
      const twin = `Twins ${round}`;
      const answers = await Promise.all([
        client.send(CreateCategoryDocument, { input: { name: twin } }),
        gateway.graphql('mutation Add($name: String!) { createCategory(input: { name: $name }) { id name } }', { name: ` ${twin} ` }),
      ]);
      expect(codesOf(answers).sort()).toEqual(['CONFLICT', 'OK']);
      const refused = answers.find((answer) => answer.errors)!;
      expect(refused.errors?.[0]?.message).toBe(`A category named "${twin}" already exists.`);
      expect(await db().category.count({ where: { name: twin } })).toBe(1);
    }
  });

  it('two categories renamed to one name: exactly one is renamed, the other is refused CONFLICT', async () => {
    for (let round = 0; round < 10; round++) {
      const [first, second] = [await category(`Left ${round}`), await category(`Right ${round}`)];
      const same = `Same ${round}`;
      const answers = await Promise.all([first, second].map(({ id }) => client.send(UpdateCategoryDocument, { id, input: { name: same } })));
      expect(codesOf(answers).sort()).toEqual(['CONFLICT', 'OK']);
      expect(answers.find((answer) => answer.errors)!.errors?.[0]?.message).toBe(`A category named "${same}" already exists.`);
      expect(await db().category.count({ where: { name: same } })).toBe(1);
    }
  });
});
