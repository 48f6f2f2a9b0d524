import openapiTS, { astToString } from 'openapi-typescript';

/** The typed client's types for an OpenAPI document (shared by `npm run openapi` and the test that checks them). */
export async function clientTypes(doc) {
  const ast = await openapiTS(structuredClone(doc), { alphabetize: true });
  return `// Generated from docs/openapi.json by \`npm run openapi\` (openapi-typescript); do not edit.\n${astToString(ast)}`;
}
