// Run from a project that installed the packed tarball: imports the package by name,
// checks what it ships and decodes a frame (argv[2]).
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

const { init, decodeRequest } = await import('kwire');
const pkgDir = dirname(createRequire(process.cwd() + '/').resolve('kwire/package.json'));
const files = readdirSync(pkgDir).sort();
const want = ['README.md', 'index.d.ts', 'index.js', 'kwire.wasm', 'messages.d.ts', 'package.json', 'src'];
if (JSON.stringify(files) !== JSON.stringify(want)) throw new Error(`the package holds ${files}, want ${want}`);
const pkg = JSON.parse(readFileSync(pkgDir + '/package.json', 'utf8'));
if (pkg.dependencies && Object.keys(pkg.dependencies).length > 0) throw new Error('the package has runtime dependencies');
await init();
const f = decodeRequest(readFileSync(process.argv[2]));
if (f.apiKey !== 0 || f.header.clientId !== 'kwire-example') throw new Error('unexpected frame ' + JSON.stringify(f.header));
console.log(`js-test-pack: ${pkg.name}@${pkg.version} installed from its tarball (${files.length} entries, no runtime dependencies) decodes ${f.header.clientId}'s Produce v${f.apiVersion}`);
