'use strict';
// The per-platform packages a released capstan installs (issue 51): the main
// package lists one package per platform in optionalDependencies, each with
// `os`, `cpu` (and `libc`) fields, so npm installs only the one for this
// machine, as esbuild and napi-rs do. Each holds the library at its root.

const path = require('node:path');

const PACKAGES = {
  'linux-x64-glibc': '@capstan-rt/linux-x64',
  'linux-arm64-glibc': '@capstan-rt/linux-arm64',
  'darwin-x64': '@capstan-rt/darwin-x64',
  'darwin-arm64': '@capstan-rt/darwin-arm64',
  'win32-x64': '@capstan-rt/win32-x64',
};

// linux-x64-glibc, linux-x64-musl, darwin-arm64, win32-x64...
function platformKey() {
  if (process.platform !== 'linux') return `${process.platform}-${process.arch}`;
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
  const glibc = report?.header?.glibcVersionRuntime;
  return `${process.platform}-${process.arch}-${glibc ? 'glibc' : 'musl'}`;
}

// { key, name, file }: file is the library inside this platform's package,
// null when the package is not installed (name null: no package exists).
function platformLibrary(fileName) {
  const key = platformKey();
  const name = PACKAGES[key] || null;
  if (!name) return { key, name, file: null };
  try {
    const dir = path.dirname(require.resolve(`${name}/package.json`));
    return { key, name, file: path.join(dir, fileName) };
  } catch {
    return { key, name, file: null };
  }
}

// What to tell a user when no library loaded.
function missingHint({ key, name }) {
  if (!name) {
    return `capstan ships no prebuilt library for this platform (${key}; prebuilt: ${Object.keys(PACKAGES).join(', ')}): ` +
      'build it from source (`make lib`) and set CAPSTAN_LIB to its path';
  }
  return `the package for this platform (${key}), ${name}, is not installed: ` +
    `install it (\`npm install ${name}\`; npm skips it when optional dependencies are omitted) or set CAPSTAN_LIB`;
}

module.exports = { PACKAGES, platformKey, platformLibrary, missingHint };
