import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

const ROOT = path.join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

test('the manifest has what the Marketplace and Open VSX ask for', () => {
  assert.match(manifest.publisher, /^[a-z0-9][a-z0-9-]*$/);  // the Open VSX namespace too
  assert.equal(manifest.license, 'MIT');
  assert.match(manifest.repository.url, /^https:\/\/github\.com\/citelsp\/citelsp(\.git)?$/);
  assert.match(manifest.bugs.url, /^https:\/\//);
  assert.ok(manifest.displayName && manifest.description && manifest.categories.length > 0);
  // No way around a missing licence or repository when packaging.
  assert.doesNotMatch(manifest.scripts.package, /skip-license|allow-missing-repository/);
  const ignored = readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8');
  for (const shipped of ['LICENSE', 'CHANGELOG.md', manifest.icon]) {
    assert.ok(ignored.includes(`!${shipped}`), shipped);
  }
});

test('the icon is a PNG of at least 128 pixels square (the Marketplace takes no SVG)', () => {
  const png = readFileSync(path.join(ROOT, manifest.icon));
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  assert.equal(width, height);
  assert.ok(width >= 128, `${width}px`);
});
