import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { renderConfigurationDocs } from '../config-docs.js';
import { projectRoot } from '../migrations/migrations.js';

// npm run docs:config: writes docs/configuration.md from the configuration schema.
const file = path.join(projectRoot, 'docs/configuration.md');
await writeFile(file, renderConfigurationDocs());
console.log(`Wrote ${path.relative(process.cwd(), file)}.`);
