import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate } from '@graphql-codegen/cli';
import { buildClientSchema, buildSchema, getIntrospectionQuery, type IntrospectionQuery, printSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import codegenConfig from '../../codegen.js';
import { useTestGateway } from '../support/gateway.js';
import { projectRoot } from '../support/processes.js';

/**
 * schema.graphql and the typed documents under test/generated/ are what
 * `npm run schema:print` writes (GraphQL Code Generator with codegen.ts). This
 * runs the same generation in memory, with the same configuration, and
 * compares every output with the committed file: a change to the schema code
 * or to an operation without `npm run schema:print` fails here.
 */

const gateway = useTestGateway();

/** file (relative to the project) → content, as codegen.ts would write them now. */
async function generatedNow(): Promise<Map<string, string>> {
  const outputs: Array<{ filename: string; content: string }> = await generate(
    { ...codegenConfig, cwd: projectRoot, silent: true },
    false,
  );
  return new Map(
    outputs.map((output) => [path.relative(projectRoot, path.resolve(projectRoot, output.filename)), output.content]),
  );
}

/** The files whose content on disk (read with `read`) differs from what would be generated. */
async function staleFiles(generated: Map<string, string>, read: (file: string) => Promise<string>): Promise<string[]> {
  const stale: string[] = [];
  for (const [file, content] of generated) {
    const committed = await read(file).catch(() => undefined);
    if (committed !== content) stale.push(file);
  }
  return stale;
}

const fromProject = (file: string) => readFile(path.join(projectRoot, file), 'utf8');
const hint = 'out of date: run `npm run schema:print` and commit the result';

let generated: Map<string, string>;
let scratch: string;

beforeAll(async () => {
  generated = await generatedNow();
  scratch = await mkdtemp(path.join(tmpdir(), 'petstore-schema-'));
});

afterAll(() => rm(scratch, { recursive: true, force: true }));

describe('schema.graphql', () => {
  it('is what `npm run schema:print` prints from the schema code now', async () => {
    const sdl = generated.get('schema.graphql');
    expect(sdl, 'codegen.ts generates schema.graphql').toBeDefined();
    // Compared whole, so the failure shows the diff.
    expect(await fromProject('schema.graphql'), `schema.graphql is ${hint}`).toBe(sdl);
  });

  it('keeps the @stability directives that the printed schema carries', () => {
    const sdl = generated.get('schema.graphql') as string;
    expect(sdl).toContain('directive @stability(');
    expect(sdl).toMatch(/@stability\(level: BETA\)/);
  });

  it('is detected as stale when it differs from the code in any way', async () => {
    const sdl = generated.get('schema.graphql') as string;
    const copies = {
      // a description edited by hand
      description: sdl.replace('"""A kind of animal', '"""A sort of animal'),
      // a field the code no longer has
      field: sdl.replace(/type Pet implements Node \{\n/, 'type Pet implements Node {\n  nickname: String\n'),
      // only the ending differs
      newline: `${sdl}\n`,
    };
    for (const [change, text] of Object.entries(copies)) {
      expect(text, change).not.toBe(sdl);
      const copy = path.join(scratch, `${change}.graphql`);
      await writeFile(copy, text);
      const onlySchema = new Map([['schema.graphql', sdl]]);
      expect(await staleFiles(onlySchema, () => readFile(copy, 'utf8')), change).toEqual(['schema.graphql']);
    }
    // and an identical copy is not
    const same = path.join(scratch, 'same.graphql');
    await writeFile(same, sdl);
    expect(await staleFiles(new Map([['schema.graphql', sdl]]), () => readFile(same, 'utf8'))).toEqual([]);
  });

  it('describes the schema the gateway serves', async () => {
    const response = await gateway.graphql<IntrospectionQuery>(getIntrospectionQuery({ descriptions: true, schemaDescription: true }));
    expect(response.errors).toBeUndefined();
    const served = buildClientSchema(response.data as IntrospectionQuery);
    const committed = buildSchema(await fromProject('schema.graphql'));
    expect(printSchema(served)).toBe(printSchema(committed));
  });
});

describe('typed documents under test/generated/', () => {
  it('are what `npm run schema:print` generates from test/documents/*.graphql now', async () => {
    const documents = [...generated.keys()].filter((file) => file.startsWith('test/generated/'));
    expect(documents.length).toBeGreaterThan(0);
    const expected = new Map(documents.map((file) => [file, generated.get(file) as string]));
    expect(await staleFiles(expected, fromProject), hint).toEqual([]);
  });
});
