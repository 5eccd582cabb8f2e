import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LegacyPetByIdDocument, RootFieldsDocument } from '../generated/graphql.js';
import { clientFor } from '../support/client.js';
import { useTestGateway } from '../support/gateway.js';

/**
 * What the schema says about itself: the stability markers, the legacy
 * lookup's deprecation and its sunset date (schema.graphql being current is
 * schema-file.test.ts's).
 */
const gateway = useTestGateway();
const client = clientFor(gateway);
const schemaFile = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');

/** The root fields (Query.x, Mutation.y) that carry a directive in schema.graphql, with the directive. */
function fieldsWithDirective(name: string): Record<string, string> {
  const found: Record<string, string> = {};
  let type = '';
  let field = '';
  for (const line of schemaFile.split('\n')) {
    const typeMatch = /^type (\w+)/.exec(line);
    if (typeMatch) type = typeMatch[1]!;
    const fieldMatch = /^ {2}(\w+)[(:]/.exec(line);
    if (fieldMatch) field = fieldMatch[1]!;
    const directive = new RegExp(`@${name}\\(([^)]*)\\)`).exec(line);
    if (directive && /^[ )]/.test(line)) found[`${type}.${field}`] = directive[1]!;
  }
  return found;
}

describe('stability markers', () => {
  it('schema.graphql marks inventorySummary and updateInventory BETA, the subscriptions EXPERIMENTAL, and nothing else', () => {
    expect(fieldsWithDirective('stability')).toEqual({
      'Query.inventorySummary': 'level: BETA',
      'Mutation.updateInventory': 'level: BETA',
      'Subscription.inventoryChanged': 'level: EXPERIMENTAL',
      'Subscription.orderChanged': 'level: EXPERIMENTAL',
      'Subscription.petStatusChanged': 'level: EXPERIMENTAL',
    });
    expect(schemaFile).toMatch(
      /directive @stability\(\s*(""".*"""\s*)?level: StabilityLevel!\s*\) on FIELD_DEFINITION/s,
    );
  });

  it('the same word leads their descriptions, as GraphiQL shows them, and no other field has one', async () => {
    const { query, mutation } = await client.ok(RootFieldsDocument);
    const marked = [...query!.fields!, ...mutation!.fields!]
      .filter((field) => /^(BETA|EXPERIMENTAL)\b/.test(field.description ?? ''))
      .map((field) => [field.name, field.description!.split(':')[0]]);
    expect(Object.fromEntries(marked)).toEqual({ inventorySummary: 'BETA', updateInventory: 'BETA' });
  });
});

describe('the legacy lookup getPetById', () => {
  it('is the only deprecated field, and names pet(id:) and the ISO 8601 sunset date', async () => {
    const { query, mutation } = await client.ok(RootFieldsDocument);
    const deprecated = [...query!.fields!, ...mutation!.fields!].filter((field) => field.isDeprecated);
    expect(deprecated.map((field) => field.name)).toEqual(['getPetById']);
    expect(deprecated[0]!.deprecationReason).toMatch(/pet\(id:\)/);
    expect(deprecated[0]!.deprecationReason).toMatch(/\b2027-06-30\b/);
  });

  it('schema.graphql prints the deprecation too', () => {
    expect(schemaFile).toMatch(
      /getPetById\([^)]*\): Pet @deprecated\(reason: "[^"]*pet\(id:\)[^"]*2027-06-30[^"]*"\)/s,
    );
  });
});

describe('a gateway configured with another sunset date', () => {
  const moved = useTestGateway({ legacySunsetDate: '2028-01-31' });
  const movedClient = clientFor(moved);

  it('names that date in the deprecation, and still answers getPetById', async () => {
    const { query } = await movedClient.ok(RootFieldsDocument);
    const legacy = query!.fields!.find((field) => field.name === 'getPetById');
    expect(legacy?.isDeprecated).toBe(true);
    expect(legacy?.deprecationReason).toContain('2028-01-31');
    expect(legacy?.deprecationReason).not.toContain('2027-06-30');
    expect(await movedClient.send(LegacyPetByIdDocument, { petId: '1' })).toEqual({
      data: { getPetById: null },
      extensions: { deprecations: [{ field: 'Query.getPetById', reason: `Use pet(id:) instead. getPetById will be removed on 2028-01-31 (sunset date).`, sunset: '2028-01-31' }] },
    });
  });
});

describe('descriptions', () => {
  it('every type, field, argument, input field and enum value of ours has one, as introspection shows', async () => {
    const response = await gateway.graphql<{
      __schema: {
        types: Array<{
          name: string;
          description: string | null;
          fields: Array<{ name: string; description: string | null; args: Array<{ name: string; description: string | null }> }> | null;
          inputFields: Array<{ name: string; description: string | null }> | null;
          enumValues: Array<{ name: string; description: string | null }> | null;
        }>;
      };
    }>(`{
      __schema {
        types {
          name description
          fields(includeDeprecated: true) { name description args { name description } }
          inputFields { name description }
          enumValues(includeDeprecated: true) { name description }
        }
      }
    }`);
    expect(response.errors).toBeUndefined();
    const builtIn = new Set(['String', 'Int', 'Boolean', 'ID', 'Float']);
    const missing: string[] = [];
    for (const type of response.data!.__schema.types) {
      if (type.name.startsWith('__') || builtIn.has(type.name)) continue;
      if (!type.description) missing.push(type.name);
      for (const field of type.fields ?? []) {
        if (!field.description) missing.push(`${type.name}.${field.name}`);
        for (const arg of field.args) if (!arg.description) missing.push(`${type.name}.${field.name}(${arg.name})`);
      }
      for (const field of type.inputFields ?? []) if (!field.description) missing.push(`${type.name}.${field.name}`);
      for (const value of type.enumValues ?? []) if (!value.description) missing.push(`${type.name}.${value.name}`);
    }
    expect(missing).toEqual([]);
  });
});
