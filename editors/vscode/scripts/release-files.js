// The repository's LICENSE and CHANGELOG.md go into the .vsix (the Marketplace and Open VSX
// show them; Open VSX refuses an extension without a licence). Copied at packaging time so
// there is one copy of each in git.
const { copyFileSync } = require('node:fs');
const path = require('node:path');

for (const name of ['LICENSE', 'CHANGELOG.md']) {
  copyFileSync(path.join(__dirname, '..', '..', '..', name), path.join(__dirname, '..', name));
}
