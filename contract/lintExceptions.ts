/**
 * The one place that lists the rules of outside OpenAPI linters that openapi.json does not meet, each
 * with its reason. Everything else in Redocly's `recommended` rules and Spectral's `spectral:oas`
 * passes. test/contract/lint.test.ts runs Redocly's rules (`@redocly/openapi-core`) on the committed
 * document and fails on any problem not listed here, and on an entry here that no longer fires.
 * Spectral is not a dependency; to check its entry: `npx @stoplight/spectral-cli lint openapi.json`
 * with a ruleset file holding `extends: ["spectral:oas"]`.
 */
export const LINT_EXCEPTIONS = {
  redocly: {
    'info-license':
      'The API is not published under a license: the project is not open source, so an `info.license` would ' +
      'state terms nobody has granted.',
  },
  spectral: {
    'info-contact':
      'The project has no contact address or page for its API to name; client teams are pointed to docs/clients.md ' +
      '("For client teams"). Add `info.contact` when a real one exists.',
  },
} as const satisfies Record<'redocly' | 'spectral', Record<string, string>>;
