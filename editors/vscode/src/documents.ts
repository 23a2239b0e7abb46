/**
 * The documents the server is started for and sent: manuscripts and bibliographies, by the
 * language id VS Code (or a Quarto, R or LaTeX extension) gives them, and by file name where
 * VS Code opens them as plain text. No `vscode` import: the unit tests read it.
 */
export const DOCUMENTS: { scheme: string; language?: string; pattern?: string }[] = [
  { scheme: 'file', language: 'markdown' },
  { scheme: 'file', language: 'quarto' },
  { scheme: 'file', language: 'rmd' },
  { scheme: 'file', language: 'latex' },
  { scheme: 'file', language: 'tex' },
  { scheme: 'file', language: 'bibtex' },
  { scheme: 'file', language: 'json' },
  // CSL-YAML bibliographies (pandoc); other YAML files are passed over by the server.
  { scheme: 'file', language: 'yaml' },
  // Without a LaTeX, Quarto or R extension VS Code opens these as plain text.
  { scheme: 'file', pattern: '**/*.bib' },
  { scheme: 'file', pattern: '**/*.{qmd,Rmd,rmd,Rnw,rnw}' },
];
