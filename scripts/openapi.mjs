// Writes the OpenAPI document (docs/openapi.json), the typed client's types
// (clients/typescript/src/schema.ts) and the AsyncAPI document of the Kafka topics
// (docs/asyncapi.json) from the built service: `npm run openapi` after changing a
// route or a zod schema. A unit test fails while either file is out of date.
//
// `npm run openapi -- --examples` first merges the responses recorded by a test run
// (`RECORD_EXAMPLES=1 npx vitest run --project http` writes them to test/.examples/) into
// src/common/http/openapi-examples.ts: the document's examples are real answers of the service.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { clientTypes } from './openapi-client.mjs';

const require = createRequire(import.meta.url);

/**
 * An example shows at most two items of a list of objects: enough to read, short enough to keep. A
 * list of plain values (a report's `columns`, a key's `scopes`) stays whole, so it still describes
 * the items beside it.
 */
function shorten(value) {
  if (Array.isArray(value)) {
    return value.some((v) => typeof v === 'object' && v !== null) ? value.slice(0, 2).map(shorten) : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v)]));
}
// Loading the app module loads every controller, and with them their @Doc entries.
require('../dist/src/app.module.js');
const { buildOpenApiDocument } = require('../dist/src/common/http/openapi-document.js');
const { buildAsyncApiDocument } = require('../dist/src/api-docs/asyncapi-document.js');
let { RECORDED_EXAMPLES: examples } = require('../dist/src/common/http/openapi-examples.js');

if (process.argv.includes('--examples')) {
  const operations = new Set(
    Object.values(buildOpenApiDocument().paths).flatMap((methods) =>
      Object.values(methods).flatMap((o) => Object.keys(o.responses).map((status) => `${o.operationId} ${status}`)),
    ),
  );
  const merged = {};
  const files = readdirSync('test/.examples')
    .filter((f) => f.endsWith('.json'))
    .sort();
  for (const file of files) {
    for (const [key, value] of Object.entries(JSON.parse(readFileSync(`test/.examples/${file}`, 'utf8')))) {
      // `<operationId> <status>`, and ` <code>` after it for an error.
      const [operationId, status] = key.split(' ');
      if (operations.has(`${operationId} ${status}`) && !(key in merged)) merged[key] = shorten(value);
    }
  }
  examples = Object.fromEntries(
    Object.keys(merged)
      .sort()
      .map((k) => [k, merged[k]]),
  );
  writeFileSync(
    'src/common/http/openapi-examples.ts',
    "// Recorded from the tests' real responses (`RECORD_EXAMPLES=1 npx vitest run --project http`, then `npm run openapi -- --examples`); do not edit by hand.\n" +
      "// A unit test checks each against its operation's schema, so an example cannot drift from the document.\n" +
      'export const RECORDED_EXAMPLES: Record<string, unknown> = {\n' +
      Object.entries(examples)
        .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)},\n`)
        .join('') +
      '};\n',
  );
  rmSync('test/.examples', { recursive: true, force: true });
  console.log(`src/common/http/openapi-examples.ts: ${Object.keys(examples).length} examples from ${files.length} recordings`);
}

const doc = buildOpenApiDocument(examples);
writeFileSync('docs/openapi.json', `${JSON.stringify(doc, null, 2)}\n`);
writeFileSync('clients/typescript/src/schema.ts', await clientTypes(doc));
writeFileSync('docs/asyncapi.json', `${JSON.stringify(buildAsyncApiDocument(), null, 2)}\n`);
console.log(`docs/openapi.json: ${Object.keys(doc.paths).length} paths; clients/typescript/src/schema.ts and docs/asyncapi.json written`);
