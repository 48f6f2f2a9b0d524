// Writes the OpenAPI document (docs/openapi.json) and the typed client's types
// (clients/typescript/src/schema.ts) from the built service: `npm run openapi` after changing a
// route or a zod schema. A unit test fails while either file is out of date.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { clientTypes } from './openapi-client.mjs';

const require = createRequire(import.meta.url);
// Loading the app module loads every controller, and with them their @Doc entries.
require('../dist/src/app.module.js');
const { buildOpenApiDocument } = require('../dist/src/common/http/openapi-document.js');
const { RECORDED_EXAMPLES } = require('../dist/src/common/http/openapi-examples.js');

const doc = buildOpenApiDocument(RECORDED_EXAMPLES);
writeFileSync('docs/openapi.json', `${JSON.stringify(doc, null, 2)}\n`);
writeFileSync('clients/typescript/src/schema.ts', await clientTypes(doc));
console.log(`docs/openapi.json: ${Object.keys(doc.paths).length} paths; clients/typescript/src/schema.ts written`);
