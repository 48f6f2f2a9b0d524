// The modules of src/ are its top-level folders (ledger, metering, common, …). Inside a module,
// imports are relative; from one module into another they name the module: `src/ledger/…`, so a
// reader sees every dependency between modules at a glance, and moving a module's files does not
// touch its callers' relative paths.
import { dirname, relative, resolve, sep } from 'node:path';

/** The module (top-level folder of src/) a file belongs to, or undefined outside src/ or at its top. */
function moduleOf(file, root) {
  const parts = relative(resolve(root, 'src'), file).split(sep);
  return parts.length > 1 && parts[0] !== '..' ? parts[0] : undefined;
}

/**
 * For a relative import `spec` written in `file`: the `src/…` specifier it must be written as when
 * it reaches into another module of src/, or undefined when it stays inside its own.
 */
export function crossModuleTarget(file, spec, root) {
  if (!spec.startsWith('.')) return undefined;
  const from = moduleOf(file, root);
  if (from === undefined) return undefined;
  const target = resolve(dirname(file), spec);
  const to = moduleOf(target, root);
  if (to === undefined || to === from) return undefined;
  return `src/${relative(resolve(root, 'src'), target).split(sep).join('/')}`;
}

/** eslint rule `modules/no-relative-cross-module`. */
export const modulesPlugin = {
  rules: {
    'no-relative-cross-module': {
      meta: {
        type: 'problem',
        fixable: 'code',
        messages: { cross: "'{{spec}}' reaches into the {{module}} module: write it as '{{target}}'" },
        schema: [],
      },
      create(context) {
        const root = context.cwd;
        const check = (node) => {
          const source = node.source;
          if (!source || typeof source.value !== 'string') return;
          const target = crossModuleTarget(context.filename, source.value, root);
          if (!target) return;
          context.report({
            node: source,
            messageId: 'cross',
            data: { spec: source.value, module: target.split('/')[1], target },
            fix: (fixer) => fixer.replaceText(source, `'${target}'`),
          });
        };
        return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
      },
    },
  },
};
