import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { DOCUMENTS } from '../src/documents';

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

test('Quarto, R Markdown and Sweave documents start the extension and reach the server', () => {
  const events: string[] = manifest.activationEvents;
  for (const language of ['markdown', 'quarto', 'rmd', 'latex', 'bibtex']) {
    assert.ok(events.includes(`onLanguage:${language}`), language);
    assert.ok(DOCUMENTS.some((d) => d.language === language), language);
  }
  // Opened as plain text when no Quarto or R extension is installed: by file name.
  const suffixes = DOCUMENTS.flatMap((d) => {
    const match = /^\*\*\/\*\.(?:\{([^}]*)\}|(\w+))$/.exec(d.pattern ?? '');
    return match ? (match[1] ?? match[2]).split(',') : [];
  });
  for (const suffix of ['qmd', 'Rmd', 'rmd', 'Rnw', 'bib']) {
    assert.ok(suffixes.includes(suffix), suffix);
  }
  for (const suffix of ['qmd', 'Rmd', 'Rnw', 'bib']) {
    assert.ok(events.includes(`workspaceContains:**/*.${suffix}`), suffix);
  }
});
