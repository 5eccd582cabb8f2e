import path from 'node:path';
import { parseArgs } from 'node:util';
import { CONTRACT_DIR, hasBaseline, readBaseline, writeBaseline } from '../contract/baseline.js';
import { contractChanges } from '../contract/check.js';
import { currentContracts } from '../contract/current.js';
import {
  type Bump,
  bumpVersion,
  type ContractChange,
  compareVersions,
  describeChange,
  parseVersion,
  requiredBump,
} from '../contract/policy.js';

// npm run contract:release [-- --breaking] [--version X.Y.Z] [--dir contract]
// Moves the released baseline (contract/) to the contracts the code defines
// now, with the version the changes need, and adds their list to
// contract/CHANGELOG.md; the result is reviewed and committed as one commit.
const usage = `Usage: npm run contract:release -- [--breaking] [--version X.Y.Z] [--dir <folder>]
  --breaking   confirm a release with breaking changes (a new major version)
  --version    a version of your choosing, at least the one the changes need
  --dir        the baseline folder (default: contract/)`;

const INITIAL_VERSION = '1.0.0';

try {
  const { values } = parseArgs({
    options: {
      breaking: { type: 'boolean', default: false },
      version: { type: 'string' },
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
  const current = currentContracts();

  if (!(await hasBaseline(dir))) {
    const version = values.version ?? INITIAL_VERSION;
    parseVersion(version);
    await writeBaseline(
      { ...current, release: { version, released: today } },
      `## ${version} (${today})\n\nThe first released baseline of both contracts.\n`,
      dir,
    );
    console.log(`Released ${version}: the first baseline, in ${path.relative(process.cwd(), dir) || '.'}/.`);
    printCommitHint(dir, version);
    process.exit(0);
  }

  const baseline = await readBaseline(dir);
  const changes = await contractChanges(baseline, current);
  const bump = requiredBump(changes);
  if (bump === 'none') {
    console.log(`Nothing to release: both contracts are as released in ${baseline.release.version}.`);
    process.exit(0);
  }
  const needed = bumpVersion(baseline.release.version, bump);
  const version = values.version ?? needed;
  parseVersion(version);
  if (compareVersions(version, needed) < 0) {
    throw new Error(`${version} is too small: these changes need a ${bump} release, ${needed} or later.\n${list(changes)}`);
  }
  if (bump === 'major' && !values.breaking) {
    throw new Error(
      `These changes break callers of ${baseline.release.version}, so the release is ${needed}:\n${list(changes)}\n` +
        'Run again with --breaking to release them as a new major version.',
    );
  }
  await writeBaseline({ ...current, release: { version, released: today } }, releaseNotes(version, today, bump, changes), dir);
  console.log(`Released ${version} (${bump}; was ${baseline.release.version}):\n${list(changes)}`);
  printCommitHint(dir, version);
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
  return [`## ${version} (${date}, ${bump})\n`, ...sections].join('\n');
}

function printCommitHint(dir: string, version: string) {
  const folder = path.relative(process.cwd(), dir) || '.';
  console.log(`Review ${folder}/ (the diff is the release) and commit it on its own:\n  git add ${folder} && git commit -m "Contract ${version}"`);
}
