// tstruth.js asks the TypeScript language service, for a sample of a
// project's identifiers, where each use's definition is
// (getDefinitionAtPosition) and every reference to the symbols of the
// first few (findReferences), and prints them as JSON for package
// navcheck (see TSTruth in tstruth.go).
//
//   node tstruth.js TYPESCRIPT_DIR PROJECT_DIR USES SYMBOLS SEED
//
// USES 0 takes every use and every symbol. It times each question (in
// milliseconds), the baseline of the precise answers' times. Places are the project's
// non-test files (not *.spec.*, *.test.*, nor under __tests__ or
// node_modules): 1-based lines and byte columns, as Toolshed answers.
'use strict';
const fs = require('fs');
const path = require('path');

const [tsDir, projectArg, usesArg, symbolsArg, seedArg] = process.argv.slice(2);
const ts = require(path.resolve(tsDir));
const project = path.resolve(projectArg);
const wantUses = Number(usesArg);
const wantSymbols = Number(symbolsArg);

// The project as the indexer sees it: its tsconfig.json.
const configFile = ts.findConfigFile(project, ts.sys.fileExists, 'tsconfig.json');
if (!configFile) throw new Error('no tsconfig.json in ' + project);
const parsed = ts.getParsedCommandLineOfConfigFile(configFile, {}, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); },
});

const host = {
  getScriptFileNames: () => parsed.fileNames,
  getScriptVersion: () => '0',
  getScriptSnapshot: (f) => (fs.existsSync(f) ? ts.ScriptSnapshot.fromString(fs.readFileSync(f, 'utf8')) : undefined),
  getCurrentDirectory: () => project,
  getCompilationSettings: () => parsed.options,
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile,
  readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists,
  getDirectories: ts.sys.getDirectories,
};
const service = ts.createLanguageService(host, ts.createDocumentRegistry());
const program = service.getProgram();

// relative is a file's path in the project, or null when it is not one
// of the files compared.
function relative(fileName) {
  const rel = path.relative(project, fileName).split(path.sep).join('/');
  if (rel.startsWith('..') || path.isAbsolute(rel) || /(^|\/)(node_modules|__tests__)\//.test(rel) ||
      /\.(spec|test)\.[cm]?[jt]sx?$/.test(rel) || /\.d\.[cm]?ts$/.test(rel)) {
    return null;
  }
  return rel;
}

// place turns a file's UTF-16 offset into a 1-based line and byte column.
function place(fileName, offset) {
  const rel = relative(fileName);
  const sf = rel && program.getSourceFile(fileName);
  if (!sf) return null;
  const { line, character } = sf.getLineAndCharacterOfPosition(offset);
  const lineStart = sf.getPositionOfLineAndCharacter(line, 0);
  const column = Buffer.byteLength(sf.text.slice(lineStart, lineStart + character), 'utf8') + 1;
  return { path: rel, line: line + 1, column };
}

// The identifiers of the compared files, in order, and the places of
// all of them: a reference elsewhere is in a comment (a JSDoc link) or a
// string, which the indexer does not read and go/types has no use in.
const files = program.getSourceFiles().filter((sf) => relative(sf.fileName));
const identifiers = [];
const inCode = new Map(); // file:offset → identifier node
for (const sf of files) {
  (function walk(node) {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
      const pos = node.getStart(sf);
      identifiers.push({ sf, pos, name: node.text, shorthand: shorthand(node) });
      inCode.set(sf.fileName + ':' + pos, node);
    }
    node.forEachChild(walk);
  })(sf);
}

// shorthand reports whether an identifier is two symbols at one place:
// a shorthand property ({ a }) or binding (const { a } = o) is a
// property's reference and a variable's definition or use.
function shorthand(node) {
  const p = node.parent;
  return (ts.isShorthandPropertyAssignment(p) && p.name === node) ||
    (ts.isBindingElement(p) && !p.propertyName && p.name === node && ts.isObjectBindingPattern(p.parent));
}

// The declarations whose name an identifier can be.
const declarationKinds = new Set([
  ts.SyntaxKind.FunctionDeclaration, ts.SyntaxKind.FunctionExpression, ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.MethodSignature, ts.SyntaxKind.PropertyDeclaration, ts.SyntaxKind.PropertySignature,
  ts.SyntaxKind.GetAccessor, ts.SyntaxKind.SetAccessor, ts.SyntaxKind.Parameter, ts.SyntaxKind.VariableDeclaration,
  ts.SyntaxKind.BindingElement, ts.SyntaxKind.ClassDeclaration, ts.SyntaxKind.ClassExpression,
  ts.SyntaxKind.InterfaceDeclaration, ts.SyntaxKind.TypeAliasDeclaration, ts.SyntaxKind.EnumDeclaration,
  ts.SyntaxKind.EnumMember, ts.SyntaxKind.ModuleDeclaration, ts.SyntaxKind.TypeParameter,
]);

// defines reports whether the identifier at pos of fileName is a
// declaration's name (an overload's too, whose definition the language
// service gives as the implementation), or what the language service
// names its definition is itself.
function defines(fileName, pos, defs) {
  const node = inCode.get(fileName + ':' + pos);
  if (node && !shorthand(node) && declarationKinds.has(node.parent.kind) && node.parent.name === node) return true;
  defs = defs || service.getDefinitionAtPosition(fileName, pos) || [];
  return defs.some((d) => d.fileName === fileName && d.textSpan.start === pos);
}

// mulberry32: a small seeded generator, so that a sample is the same
// every run.
let seed = Number(seedArg) >>> 0;
function random() {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const order = identifiers.map((_, i) => i);
if (wantUses > 0) {
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
}

const excluded = {};
const uses = [];
for (const i of order) {
  if (wantUses > 0 && uses.length === wantUses) break;
  const id = identifiers[i];
  const why = classify(id);
  if (typeof why === 'string') {
    excluded[why] = (excluded[why] || 0) + 1;
  } else {
    uses.push(why);
  }
}

// classify returns the use an identifier is, or why it is not one.
function classify(id) {
  const start = performance.now();
  const defs = service.getDefinitionAtPosition(id.sf.fileName, id.pos) || [];
  const took = performance.now() - start;
  if (defs.length === 0) return 'no definition';
  if (id.shorthand) return 'shorthand: two symbols at one place';
  if (defines(id.sf.fileName, id.pos, defs)) return 'a definition';
  const definitions = defs.map((d) => place(d.fileName, d.textSpan.start)).filter(Boolean);
  if (definitions.length === 0) return 'defined outside the project';
  return { at: place(id.sf.fileName, id.pos), name: id.name, definitions, sf: id.sf, pos: id.pos, defs, took };
}

// references returns the kind of the symbol defined at use.defs and the
// references findReferences gives for it, in code, declarations left
// out: the declarations' names, and the places use.defs names (a
// destructured variable's, const { a } = o, is not a declaration's name
// alone, being a use of o's property a too, and findReferences marks it
// a definition only when asked there, not from a use). The
// language service answers in groups, one per symbol: the symbol's own;
// one per import or export that names it (kind "alias"), with the uses
// through that name; and those of related symbols (the interface member
// a method implements, say), which are other symbols and left out. The
// symbol's own group is the one that names, or holds, a place use.defs
// names: the definition of a call of an overloaded method is the
// overload called, and its group is named after the first.
function references(use) {
  const key = (span) => span.fileName + ':' + span.textSpan.start;
  const defined = new Set(use.defs.map(key));
  const start = performance.now();
  const found = service.findReferences(use.sf.fileName, use.pos) || [];
  referenceMs.push(performance.now() - start);
  const out = [];
  let kind = '';
  for (const group of found) {
    const own = defined.has(key(group.definition)) || group.references.some((r) => defined.has(key(r)));
    if (!own && group.definition.kind !== 'alias') continue;
    if (group.definition.kind !== 'alias') kind = kind || group.definition.kind;
    for (const r of group.references) {
      const at = inCode.has(key(r)) && !defined.has(key(r)) && !defines(r.fileName, r.textSpan.start) &&
        place(r.fileName, r.textSpan.start);
      if (at) out.push(at);
    }
  }
  return { kind, uses: out };
}

const symbols = [];
const referenceMs = [];
const seen = new Set();
for (const [i, use] of uses.entries()) {
  if (wantUses > 0 && i >= wantSymbols) break;
  const key = JSON.stringify(use.definitions);
  if (seen.has(key)) continue;
  seen.add(key);
  symbols.push({ name: use.name, at: use.at, ...references(use) });
}

process.stdout.write(JSON.stringify({
  files: files.map((sf) => relative(sf.fileName)),
  uses: uses.map((u) => ({ at: u.at, name: u.name, definitions: u.definitions })),
  symbols,
  excluded,
  definitionMs: uses.map((u) => u.took),
  referenceMs,
}));
