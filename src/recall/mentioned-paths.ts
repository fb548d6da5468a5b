/**
 * File paths a text mentions (issue 24). A record's paths are words of its `paths` field and what a
 * hit names as a file it shares with the event, so a thing taken for a file that is not one makes
 * unrelated runs "share a file": on the Hadoop tracker set 819 of 2,000 records named a "path",
 * most of them `java.lang`, `org.apache.hadoop.fs`, `e.g`, `www.mouser.com` or `Thread.java` from
 * a stack frame. The rule is by shape alone: a path with a slash, or a bare name whose extension is
 * a known source, config or data file's (or a well-known file without one, `Dockerfile`). A dotted
 * name whose last part is no such extension is a package, a namespace, a config key, an
 * abbreviation or a host, not a file.
 */

/**
 * Extensions of source, build, config, data and log files: a bare name ending in one is a file. Not
 * the one-letter ones that end abbreviations ("a.m", "p.m"), nor `.fs`, `.io` or `.net`, which end
 * package names and hosts more often than F# or any other files.
 */
const FILE_EXTENSIONS = new Set(
  (
    'ts tsx mts cts js jsx mjs cjs vue svelte astro py pyi pyx ipynb rb erb go rs java kt kts scala groovy gradle clj cljs ' +
    'c h cc cpp cxx hpp hh hxx mm swift cs fsx vb php pl pm lua jl dart ex exs erl hrl elm hs ml mli nim zig sol ' +
    'sh bash zsh fish ps1 psm1 bat cmd sql graphql gql proto thrift avsc ' +
    'json jsonc json5 yml yaml toml ini cfg conf properties env xml xsd xsl plist lock mod sum gemspec podspec csproj sln ' +
    'pom mk cmake bazel bzl tf tfvars hcl nix dockerfile ' +
    'html htm xhtml xul jsm dtd idl webidl ftl rdf manifest css scss sass less md mdx rst adoc txt csv tsv log diff patch ' +
    'svg png jpg jpeg gif ico webp pdf sqlite db eml inc ja ' +
    'jar war ear whl gz tgz zip tar xz bz2 xpi crx apk ipa msi dmg deb rpm so dll dylib exe wasm class pyc'
  ).split(' '),
);

/** Files known by name alone, without an extension. */
const BARE_FILES = new Set(['moz.build', 'moz.configure', 'dockerfile', 'containerfile', 'makefile', 'gnumakefile', 'gemfile', 'rakefile', 'podfile', 'jenkinsfile', 'procfile', 'vagrantfile', 'brewfile', 'justfile', 'codeowners']);

/** Names of products and libraries that end like a file ("Node.js"): said in prose, not files. */
const NAMED_LIKE_FILES = new Set(['node.js', 'vue.js', 'next.js', 'nuxt.js', 'react.js', 'angular.js', 'ember.js', 'backbone.js', 'express.js', 'd3.js', 'three.js', 'chart.js', 'moment.js', 'p5.js', 'deno.land']);

/**
 * Packages of a runtime and its test harness: their frames are in every stack trace of that kind
 * (`at java.lang.Thread.run(Thread.java:748)`), so their files say nothing about which problem it is.
 * A frame of any other package names the file the code is in, and is kept.
 */
const RUNTIME_FRAME = /^(?:java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala|org\.junit|junit|org\.testng|org\.apache\.maven\.surefire|org\.gradle|worker\.org\.gradle)\./;

/** A Java (JVM) stack frame: `at pkg.Class.method(File.java:12)`, after Java 9 `at java.base/pkg...`; group 1 the class, 2 the file. */
const JVM_FRAME = /\bat\s+(?:[\w.@$-]*\/){0,2}([\w$]+(?:\.[\w$]+)+)\.[\w$<>-]+\(([\w$-]+\.[a-zA-Z]\w{0,9})(?::\d+)?\)/g;

/**
 * A Python traceback's frame: `File "/usr/lib/python3.11/threading.py", line 1038, in _bootstrap`;
 * group 1 the file as the frame names it.
 */
const PYTHON_FRAME = /\bFile "([^"\n]{1,300})", line \d+/g;

/**
 * A Node (V8) stack frame's place: `at fn (/app/src/x.ts:3:9)`, `at /app/src/x.js:3:9`,
 * `at file:///app/src/x.mjs:3:9`, `at fn (node:internal/...:1:2)`; group 1 the place without its
 * line and column.
 */
const NODE_FRAME = /\bat\s+(?:(?:new|async)\s+)?(?:[^\s()]+(?: \[as [^\]\s]+\])?\s+\()?((?:file:\/\/)?[^\s()]+?):\d+:\d+\)?/g;

/**
 * A Go panic's frame line: `\t/usr/local/go/src/runtime/panic.go:884 +0x213` (or an assembly `.s`); group 1 the file.
 */
const GO_FRAME = /^[ \t]+(\/[^\s:]+\.(?:go|s)):\d+(?: \+0x[\da-f]+)?$/gm;

/**
 * Files of a runtime and of test harnesses, as their frames name them: in every trace of that
 * kind, so they say nothing about which problem it is. Python's standard library (not what was
 * installed beside it), its test runners; Node's own modules and the test runners installed in
 * node_modules; Go's standard library under its root (`.../go/src/runtime/`, a first segment with
 * no dot: a module's path starts with its host).
 */
const RUNTIME_FILE = new RegExp(
  [
    String.raw`^<`, // `<frozen importlib._bootstrap>`, `<string>`, `<anonymous>`
    String.raw`/lib/python\d[\d.]*/(?!(?:site|dist)-packages/)`,
    String.raw`/(?:site|dist)-packages/(?:_pytest|pytest|pluggy|unittest2?|nose2?|_pydev\w*)/`,
    String.raw`^(?:node:|internal/|native$)`,
    String.raw`/node_modules/(?:jest[\w-]*|@jest/[\w-]+|mocha|vitest|@vitest/[\w-]+|tap|ava|jasmine[\w-]*|tinypool|ts-node|tsx|@babel/register)/`,
    String.raw`/go(?:/[\d.]+/x64)?/src/[a-z][a-z\d]*/`,
  ].join('|'),
);

/** Whether a frame's file is the runtime's or a test harness's (RUNTIME_FILE). */
export function isRuntimeFile(file: string): boolean {
  return RUNTIME_FILE.test(file);
}

/** A name in reverse-domain order (`org.apache.hadoop.fs`, `com.google.common.io.Files`): a package or a class, not a file. */
const PACKAGE = /^(?:org|com|net|io|edu|gov|java|javax|jdk|sun|android|androidx|kotlin|kotlinx|scala)\.[a-z_$][\w$]*\./i;

/** A first path segment that is a host (`github.com/...`, `www.mouser.com/...`): a URL without its scheme. */
const HOST = /^(?:[a-z\d-]+\.)+(?:com|org|net|io|dev|edu|gov|co|uk|de|info|biz|me|app|ai|cloud|us|eu|ru|cn|jp|fr)$/i;

/** Whether `p` (line number taken off, `./` kept) is a file path by its shape. */
function isFilePath(p: string): boolean {
  if (p.length > 200 || /^[a-z][\w+.-]*:/i.test(p)) return false; // URLs, and too long to be one
  const segments = p.replace(/^(?:\.{1,2}\/)+/, '').split('/');
  const name = segments[segments.length - 1]!.toLowerCase();
  if (!name || /^v?\d+(?:\.\d+)+$/.test(name)) return false; // a directory, or a version
  if (PACKAGE.test(name)) return false;
  // Under a directory any extension will do (`.mozconfig`, `.checksums`), but an extension, not a
  // version's or a user agent's last part (`Firefox/-1.0`, `SeaMonkey/2.53.17b1`) nor `x@resource`.
  if (segments.length > 1) return !HOST.test(segments[0]!) && (/\.[a-z][a-z\d_]{0,9}$/.test(name) || BARE_FILES.has(name));
  if (NAMED_LIKE_FILES.has(name)) return false;
  if (BARE_FILES.has(name)) return true;
  const dot = name.lastIndexOf('.');
  return dot > 0 && FILE_EXTENSIONS.has(name.slice(dot + 1));
}

/** File paths a text mentions (`src/auth/saml.ts`, `lib/x.py:12`, `Dockerfile`), without line numbers. */
export function mentionedPaths(text: string): string[] {
  const found = new Set<string>();
  // Stack frames first: a runtime's frame is taken out, another's file kept, so that the frame's
  // `(Thread.java:748)` is not read again below as a file mentioned.
  const frame = (file: string) => {
    if (!isRuntimeFile(file) && isFilePath(file)) found.add(file.replace(/^\.\//, ''));
    return ' ';
  };
  const rest = text
    .replace(JVM_FRAME, (_, cls: string, file: string) => (RUNTIME_FRAME.test(`${cls}.`) ? ' ' : frame(file)))
    .replace(PYTHON_FRAME, (_, file: string) => frame(file))
    .replace(NODE_FRAME, (_, place: string) => frame(place.replace(/^file:\/\//, '')))
    .replace(GO_FRAME, (_, file: string) => frame(file));
  for (const m of rest.matchAll(/(?:^|[\s`'"(\[<])((?:\.{0,2}\/)?(?:[\w.@-]+\/)*[\w.@-]*[\w@-])(?::\d+(?:[-:]\d+)?)?(?=$|[\s`'")\]>,.;:!?])/gm)) {
    const p = m[1]!;
    // Most words have neither a dot nor a slash: only a file known by name can be one of them.
    if ((p.includes('.') || p.includes('/') || BARE_FILES.has(p.toLowerCase())) && isFilePath(p)) found.add(p.replace(/^\.\//, ''));
  }
  return [...found];
}
