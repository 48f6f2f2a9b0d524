import { parseDocument } from 'yaml';

/** Aliases a document may expand: an Environment needs few, and a small cap stops an alias bomb. */
const MAX_ALIASES = 50;

/**
 * An Environment document sent as text: YAML 1.2 with its core schema (so `yes` stays a string),
 * which also reads JSON. One document, unique keys, no merge keys, no tags beyond JSON's types.
 */
export function parseEnvironmentText(text: string): { value: unknown } | { problem: string } {
  const problem = (why: string) => ({ problem: `is not a YAML or JSON Environment document: ${why}` });
  const doc = parseDocument(text, {
    version: '1.2',
    schema: 'core',
    uniqueKeys: true,
    merge: false,
    resolveKnownTags: false,
    prettyErrors: false,
  });
  // A warning (an unresolved tag such as !!binary) is refused too: only plain JSON values are read.
  const [error] = [...doc.errors, ...doc.warnings];
  if (error) return problem(error.message.split('\n')[0] ?? error.code);
  try {
    return { value: doc.toJS({ maxAliasCount: MAX_ALIASES }) as unknown };
  } catch (e) {
    return problem((e as Error).message);
  }
}
