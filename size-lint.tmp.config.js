import tseslint from 'typescript-eslint';
export default [
  { files: ['**/*.ts', '**/*.tsx'], languageOptions: { parser: tseslint.parser }, 
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
             'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false, IIFEs: true }] } },
];
