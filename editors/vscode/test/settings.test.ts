import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { explicitSettings, Inspected, needsRestart, serverSettingSpecs } from '../src/settings';

const properties = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'))
  .contributes.configuration.properties as Record<string, { scope?: string }>;
const specs = serverSettingSpecs(properties);

test('the extension sends every server setting and none of its own', () => {
  const keys = specs.map((s) => s.key);
  assert.ok(keys.includes('minPriority'));
  assert.ok(keys.includes('resolvers.crossref.baseUrl'));
  assert.ok(!keys.some((k) => k.startsWith('server.') || k.startsWith('trace.')));
  assert.equal(keys.length, Object.keys(properties).length - 3);
});

test('only settings the user set are sent, nested by their dotted keys', () => {
  const seen: Record<string, Inspected> = {
    minPriority: { globalValue: 'P1' },
    offline: { globalValue: false, workspaceValue: true },
    'resolvers.crossref.minIntervalMs': { workspaceFolderValue: 50, workspaceValue: 70 },
    'resolvers.crossref.baseUrl': { globalValue: 'http://127.0.0.1:9000' },
    mailto: { globalValue: null },
  };
  assert.deepEqual(explicitSettings(specs, (key) => seen[key]), {
    minPriority: 'P1',
    offline: true,
    resolvers: { crossref: { minIntervalMs: 50, baseUrl: 'http://127.0.0.1:9000' } },
  });
  assert.deepEqual(explicitSettings(specs, () => undefined), {});
});

test('base URLs and API keys come from the user settings only, never from a workspace', () => {
  const seen: Record<string, Inspected> = {
    'resolvers.openalex.baseUrl': { workspaceValue: 'https://evil.example.org' },
    openalexApiKey: { globalValue: 'user-key', workspaceValue: 'repo-key' },
    semanticScholarApiKey: { workspaceFolderValue: 'repo-key' },
  };
  assert.deepEqual(explicitSettings(specs, (key) => seen[key]), { openalexApiKey: 'user-key' });
});

test('sent values are copies', () => {
  const bibliography = ['refs.bib'];
  const sent = explicitSettings(specs, (key) => key === 'bibliography' ? { globalValue: bibliography } : undefined);
  bibliography.push('other.bib');
  assert.deepEqual(sent, { bibliography: ['refs.bib'] });
});

test('only citelsp.server.* changes restart the server', () => {
  assert.equal(needsRestart((s) => s === 'citelsp.server'), true);
  assert.equal(needsRestart((s) => s === 'citelsp.minPriority'), false);
});
