import { describeSettings } from './config.js';

/**
 * docs/configuration.md, written from the configuration schema itself
 * (src/config.ts): every setting, its default and what it is for. `npm run
 * docs:config` writes it; a test fails when the file and the schema differ.
 */
const GROUPS = [
  'Server',
  'Database',
  'Embedded database',
  'Authentication',
  'Security',
  'Limits',
  'GraphQL execution and caches',
  'Response cache',
  'Live queries',
  'Redis and events',
  'Legacy lookup',
  'Metrics and logs',
  'Traces',
];

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

export function renderConfigurationDocs(): string {
  const settings = describeSettings();
  const unknown = settings.filter((setting) => !GROUPS.includes(setting.group));
  if (unknown.length > 0) throw new Error(`Settings in no known group: ${unknown.map((setting) => setting.name).join(', ')}`);
  const sections = GROUPS.map((group) => {
    const rows = settings
      .filter((setting) => setting.group === group)
      .map((setting) => `| \`${setting.name}\` | ${cell(setting.shownDefault)} | ${cell(setting.description)} |`);
    return [`## ${group}`, '', '| Setting | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
  });
  return [
    '# Configuration',
    '',
    '<!-- Written by `npm run docs:config` from src/config.ts; edit the descriptions there. -->',
    '',
    'Every setting comes from the environment and is validated once at start-up: a bad value stops the gateway',
    'with one line per setting naming what it accepts. An empty value counts as unset.',
    '',
    ...sections.flatMap((section) => [section, '']),
  ].join('\n');
}
