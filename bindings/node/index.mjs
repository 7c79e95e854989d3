// ESM entry point: the same module as the CommonJS one (lib/index.cjs).
import capstan from './lib/index.cjs';

export const {
  Registry,
  Journal,
  Batch,
  Stream,
  McpServer,
  McpMount,
  CapstanError,
  ProviderError,
  SchemaError,
  InputRequired,
  parseCalls,
  formatResults,
  checkHistory,
  Image,
  File,
  runtime,
  FORMATS,
  version,
  libraryPath,
} = capstan;
export default capstan;
