// The package as npm would publish it (`npm pack --dry-run --json`): every file the
// package needs at run time and for its types is in the tarball (the modules index.js
// reaches through its imports, kwire.wasm, the .d.ts files they name), nothing else is
// (no tests, no benchmarks), and package.json's main, types and exports point at files
// in it. Needs kwire.wasm in this folder (make js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, normalize } from 'node:path';
import { VERSION } from '../index.js';

const DIR = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(DIR, 'package.json'), 'utf8'));

function packed() {
  assert.ok(existsSync(join(DIR, 'kwire.wasm')), 'kwire.wasm is missing: run make js');
  const out = execFileSync(process.env.NPM || 'npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [info] = JSON.parse(out);
  return { info, files: new Set(info.files.map((f) => f.path)) };
}

// The relative specifiers a module imports or re-exports (static and dynamic).
function relativeImports(text) {
  const out = new Set();
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+)\1/g)) out.add(m[2]);
  return out;
}

// Every file reachable from `start` by relative imports, as package-relative paths; a
// .js specifier in a .d.ts names the .d.ts beside it.
function reachable(start, types) {
  const seen = new Set();
  const todo = [start];
  while (todo.length > 0) {
    const f = todo.pop();
    if (seen.has(f)) continue;
    seen.add(f);
    for (const spec of relativeImports(readFileSync(join(DIR, f), 'utf8'))) {
      let target = normalize(join(dirname(f), spec));
      if (types) target = target.replace(/\.js$/, '.d.ts');
      todo.push(target);
    }
  }
  return seen;
}

test('npm pack: the tarball holds what the package needs and nothing test-only', () => {
  const { info, files } = packed();
  assert.equal(info.name, 'kwire');
  assert.equal(info.version, pkg.version);
  assert.equal(pkg.private, undefined, 'package.json says private: npm publish would refuse it');
  for (const f of ['package.json', 'README.md', 'index.js', 'index.d.ts', 'messages.d.ts', 'kwire.wasm', 'src/session.js', 'src/version.js']) {
    assert.ok(files.has(f), `${f} is not in the tarball`);
  }
  const code = reachable('index.js', false);
  const types = reachable('index.d.ts', true);
  for (const f of [...code, ...types]) assert.ok(files.has(f), `${f} (imported) is not in the tarball`);
  for (const f of readdirSync(join(DIR, 'src'))) {
    assert.ok(files.has(`src/${f}`), `src/${f} is not in the tarball`);
    assert.ok(code.has(`src/${f}`) || types.has(`src/${f}`), `src/${f} is shipped but nothing imports it`);
  }
  for (const f of files) {
    assert.ok(!/^(test|bench|node_modules)\//.test(f), `${f} is test-only or a dependency`);
    assert.ok(!/\.tgz$|^ci-install\.sh$|^js\.mk$|^package-lock\.json$|^inspector\.html$|^kwire-inspect\.wasm$/.test(f), `${f} is not part of the package`);
  }
  const used = new Set([...code, ...types, 'package.json', 'README.md', 'kwire.wasm']);
  assert.deepEqual([...files].sort(), [...used].sort(), 'the tarball holds exactly the files the package uses');
  const wasm = info.files.find((f) => f.path === 'kwire.wasm');
  assert.ok(wasm.size > 1 << 20, `kwire.wasm is ${wasm.size} bytes`);
  assert.equal(Object.keys(pkg.dependencies ?? {}).length, 0, 'runtime dependencies');
});

test('package.json: main, types and exports name files in the tarball', () => {
  const { files } = packed();
  const rel = (p) => normalize(p).replace(/^\.\//, '');
  assert.equal(pkg.type, 'module');
  assert.ok(files.has(rel(pkg.main)), pkg.main);
  assert.ok(files.has(rel(pkg.types)), pkg.types);
  const root = pkg.exports['.'];
  assert.equal(root.types, pkg.types, 'exports["."].types and types differ');
  assert.equal(rel(root.default), rel(pkg.main));
  assert.deepEqual(Object.keys(root), ['types', 'default'], 'types must come first in the conditions');
  for (const [sub, target] of Object.entries(pkg.exports)) {
    const t = typeof target === 'string' ? target : target.default;
    assert.ok(files.has(rel(t)), `exports["${sub}"] -> ${t} is not in the tarball`);
  }
  assert.ok(pkg.exports['./kwire.wasm'], 'kwire.wasm is not exported (bundlers and custom loaders import it)');
  assert.equal(VERSION, pkg.version, 'index.js VERSION and package.json version differ');
});
