import process from 'node:process';

// npm checks each package's `engines` against the Node that runs npm, which may be older than the
// Node 24 this project installs into node_modules/.bin and runs everything on (npm scripts find it
// first on PATH). .npmrc therefore keeps npm to its errors; when npm's Node was older, this says so
// in one line. Plain JavaScript: it runs before anything could compile TypeScript for it.
const npmNode = /\bnode\/(v(\d+)\S*)/.exec(process.env.npm_config_user_agent ?? '');
if (npmNode && Number(npmNode[2]) < Number(process.versions.node.split('.')[0])) {
  process.stdout.write(
    `npm ran on Node ${npmNode[1]}, the gateway and npm scripts on Node ${process.version} (node_modules/.bin): ` +
      "npm's engine warnings against its own Node are off (loglevel=error in .npmrc).\n",
  );
}
