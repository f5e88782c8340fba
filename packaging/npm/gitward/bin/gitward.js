#!/usr/bin/env node
// Starts the gitward binary of the package built for this platform, which npm installed
// beside this one as an optional dependency (only the one whose `os`/`cpu` match), with
// the pinned OpenSpec CLI this package depends on, so the spec tools work without a
// setup step. Nothing is downloaded at install or run time.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const PLATFORMS = {
  'darwin-arm64': 'gitward-darwin-arm64',
  'darwin-x64': 'gitward-darwin-x64',
  'linux-arm64': 'gitward-linux-arm64',
  'linux-x64': 'gitward-linux-x64',
};

function fail(message) {
  process.stderr.write(`gitward: ${message}\n`);
  process.exit(1);
}

function binary() {
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    fail(`no prebuilt binary for ${key}; install from source with \`cargo install gitward\``);
  }
  try {
    return require.resolve(`${pkg}/bin/gitward`);
  } catch {
    return fail(
      `the package ${pkg} that holds the binary is not installed; ` +
        'install again without --omit=optional (or --no-optional)',
    );
  }
}

// The OpenSpec CLI this package pins, by the path its own manifest names. Looked up along
// the node_modules directories above this file, as require would: the package's
// `exports` do not expose its package.json to require.resolve.
function openspec() {
  for (const dir of module.paths) {
    const manifest = path.join(dir, '@fission-ai', 'openspec', 'package.json');
    if (!fs.existsSync(manifest)) continue;
    try {
      const { bin } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
      const relative = typeof bin === 'string' ? bin : bin && bin.openspec;
      return relative ? path.join(path.dirname(manifest), relative) : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

const env = { ...process.env };
if (!env.FYLLO_OPENSPEC_CLI_PATH) {
  const cli = openspec();
  if (cli) env.FYLLO_OPENSPEC_CLI_PATH = cli;
}

// The host talks to gitward over the inherited stdio; a signal the host sends this
// launcher is passed on, and gitward's exit is this process's exit.
const child = spawn(binary(), process.argv.slice(2), { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => child.kill(signal));
}
child.on('error', (error) => fail(`cannot start ${error.path || 'the binary'}: ${error.message}`));
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
