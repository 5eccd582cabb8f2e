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
      expect(error.message).toContain('Dogs');
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
    expectError(await client.send(UpdateCategoryDocument, { id: created.id, input: { name: 'Dogs' } }), 'CONFLICT');
    expect((await db().category.findUniqueOrThrow({ where: { id: BigInt(created.id) } })).name).toBe('Lizards');
  });

  it('answers NOT_FOUND for a category that does not exist', async () => {
    expectError(await client.send(UpdateCategoryDocument, { id: '424242', input: { name: 'Ghosts' } }), 'NOT_FOUND');
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

  it('refuses while a pet belongs to it, and keeps both', async () => {
    const created = await category('Parrots');
    const polly = await pet('Polly', created.id);
    const error = expectError(await client.send(DeleteCategoryDocument, { id: created.id }), 'CONFLICT');
    expect(error.message).toContain('1 pet');
    expect(await db().category.findUnique({ where: { id: BigInt(created.id) } })).not.toBeNull();
    expect(await db().pet.findUnique({ where: { id: BigInt(polly.id) } })).not.toBeNull();
  });

  it('answers NOT_FOUND for a category that does not exist', async () => {
    expectError(await client.send(DeleteCategoryDocument, { id: '424242' }), 'NOT_FOUND');
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
    expect(error.message).toContain('open order');
    expect(await db().pet.findUnique({ where: { id } })).not.toBeNull();
    expect(await db().inventoryItem.findUnique({ where: { petId: id } })).not.toBeNull();
    expect(await db().order.count({ where: { petId: id } })).toBe(2);
  });

  it('answers NOT_FOUND for a pet that does not exist', async () => {
    expectError(await client.send(DeletePetDocument, { id: '424242' }), 'NOT_FOUND');
  });
});

describe('createPet and deleteCategory at the same time', () => {
  it('a pet added while its category is deleted either wins (the delete is refused) or finds no category', async () => {
    for (let round = 0; round < 10; round++) {
      const category = (await gateway.prisma.category.create({ data: { name: `Kind ${round}` } })).id.toString();
      const [created, deleted] = await Promise.all([
        client.send(CreatePetDocument, { input: { name: 'Newcomer', categoryId: category } }),
        client.send(DeleteCategoryDocument, { id: category }),
      ]);
      const outcome = codesOf([created, deleted]).join(' ');
      expect(['OK CONFLICT', 'NOT_FOUND OK']).toContain(outcome);
      const left = await gateway.prisma.category.count({ where: { id: BigInt(category) } });
      const pets = await gateway.prisma.pet.count({ where: { categoryId: BigInt(category) } });
      expect({ outcome, left, pets }).toEqual(
        outcome === 'OK CONFLICT' ? { outcome, left: 1, pets: 1 } : { outcome, left: 0, pets: 0 },
      );
    }
  });
});
