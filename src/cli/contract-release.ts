import path from 'node:path';
import { parseArgs } from 'node:util';
import { CONTRACT_DIR, hasBaseline, readBaseline, type Releases, writeBaseline } from '../contract/baseline.js';
import { changesIn, contractChanges, requiredBumps } from '../contract/check.js';
import { currentContracts, type Versions } from '../contract/current.js';
import {
  type Bump,
  bumpVersion,
  type ContractChange,
  type ContractName,
  contractLabels,
  contractNames,
  describeChange,
} from '../contract/policy.js';

// npm run contract:release [-- --breaking] [--dir contract]
// Moves each contract whose code differs from its release in contract/ to
// what the code defines now, on its own version line: the step is the one its
// own changes need, so a GraphQL break never makes a new major of the REST
// routes' document, nor the other way round. Each moved contract's changes go
// to its section of contract/CHANGELOG.md; the result is reviewed and
// committed as one commit.
const usage = `Usage: npm run contract:release -- [--breaking] [--dir <folder>]
  --breaking   confirm a release with breaking changes (a new major version of the contract they break)
  --dir        the baseline folder (default: contract/)
Each contract's version follows from its own changes; there is no version to choose.`;

const INITIAL_VERSION = '1.0.0';

try {
  const { values } = parseArgs({
    options: {
      breaking: { type: 'boolean', default: false },
      dir: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const dir = values.dir ? path.resolve(values.dir) : CONTRACT_DIR;
  const today = new Date().toISOString().slice(0, 10);

  if (!(await hasBaseline(dir))) {
    const versions: Versions = { graphql: INITIAL_VERSION, openapi: INITIAL_VERSION };
    const release = { version: INITIAL_VERSION, released: today };
    const notes = `### ${INITIAL_VERSION} (${today})\n\nThe first released baseline.\n`;
    await writeBaseline({ ...currentContracts(versions), release: { graphql: release, openapi: release } }, { graphql: notes, openapi: notes }, dir);
    console.log(`Released GraphQL and OpenAPI ${INITIAL_VERSION}: the first baseline, in ${path.relative(process.cwd(), dir) || '.'}/.`);
    printHints(dir, [...contractNames], versions);
    process.exit(0);
  }

  const baseline = await readBaseline(dir);
  const changes = await contractChanges(baseline, currentContracts());
  const bumps = requiredBumps(changes);
  const moving = contractNames.filter((name) => bumps[name] !== 'none');
  const was = (name: ContractName) => `${contractLabels[name]} ${baseline.release[name].version}`;
  if (moving.length === 0) {
    console.log(`Nothing to release: the contracts are as released in ${contractNames.map(was).join(' and ')}.`);
    process.exit(0);
  }

  const versions = Object.fromEntries(
    contractNames.map((name) => {
      const bump = bumps[name];
      return [name, bump === 'none' ? baseline.release[name].version : bumpVersion(baseline.release[name].version, bump)];
    }),
  ) as Versions;
  const breaking = moving.filter((name) => bumps[name] === 'major');
  if (breaking.length > 0 && !values.breaking) {
    throw new Error(
      breaking
        .map((name) => `These changes break callers of ${was(name)}, so its release is ${versions[name]}:\n${list(changesIn(changes, name))}`)
        .join('\n') + '\nRun again with --breaking to release them as a new major version.',
    );
  }

  const release: Releases = { ...baseline.release };
  const notes: Partial<Record<ContractName, string>> = {};
  for (const name of moving) {
    release[name] = { version: versions[name], released: today };
    notes[name] = releaseNotes(versions[name], today, bumps[name], changesIn(changes, name));
  }
  await writeBaseline({ ...currentContracts(versions), release }, notes, dir);
  for (const name of contractNames) {
    console.log(
      moving.includes(name)
        ? `Released ${contractLabels[name]} ${versions[name]} (${bumps[name]}; was ${baseline.release[name].version}):\n${list(changesIn(changes, name))}`
        : `${was(name)} stays: nothing in it changed.`,
    );
  }
  printHints(dir, moving, versions);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  console.error(usage);
  process.exit(1);
}

function list(changes: readonly ContractChange[]): string {
  return changes.map((change) => `  - [${change.kind}] ${describeChange(change)}`).join('\n');
}

function releaseNotes(version: string, date: string, bump: Bump, changes: readonly ContractChange[]): string {
  const groups: Array<[string, ContractChange[]]> = [
    ['Breaking', changes.filter((change) => change.kind === 'breaking')],
    ['Dangerous', changes.filter((change) => change.kind === 'dangerous')],
    ['Added', changes.filter((change) => change.kind === 'addition')],
    ['Texts', changes.filter((change) => change.kind === 'annotation')],
  ];
  const sections = groups
    .filter(([, group]) => group.length > 0)
    .map(([title, group]) => `${title}:\n${group.map((change) => `- ${describeChange(change)}`).join('\n')}\n`);
  return [`### ${version} (${date}, ${bump})\n`, ...sections].join('\n');
}

function printHints(dir: string, moved: readonly ContractName[], versions: Versions) {
  const folder = path.relative(process.cwd(), dir) || '.';
  const subject = moved.map((name) => `${contractLabels[name]} ${versions[name]}`).join(', ');
  // The served schema's description names the GraphQL version, so the printed schema.graphql moves with it.
  const print = moved.includes('graphql') && dir === CONTRACT_DIR ? '  npm run schema:print   # schema.graphql names the new GraphQL version\n' : '';
  console.log(
    `Review ${folder}/ (the diff is the release) and commit it on its own:\n${print}` +
      `  git add ${folder}${print ? ' schema.graphql' : ''} && git commit -m "Contract release: ${subject}"`,
  );
}
