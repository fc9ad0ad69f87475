// Command-line model management: list the catalog with availability, and pull local GGUF models
// (with a progress bar, resume and checksum verification).
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { existsSync } from 'node:fs';
import type { EngineModelDefinition, LocalModelDefinition } from '../config/config.js';
import { ConfigError, loadConfig } from '../config/load-config.js';
import { NodeLlamaEngine } from '../models/local/local-engine.js';
import { ModelDownloadError } from '../models/local/model-downloader.js';
import { createProgressBar } from '../models/local/progress-bar.js';
import { connectionOf } from '../models/model-kinds.js';
import { ModelRegistry } from '../models/model-registry.js';
import { SpeechEngines } from '../models/speech/speech-engines.js';

const usage = `Usage: npm run models -- <command> [options]

Commands:
  list                 The model catalog, with each model's availability and the reason when not.
  pull [NAME…]         Download local models (default: the default model, if local) and the files
                       of sherpa-onnx speech models. A partial download resumes; each file is
                       checked against its sha256 before use.

Options:
  --json               Print JSON (list).

The catalog is the service's (PLATFORM_CONFIG); files go to MODELS_DIR (default ./data/models).
HF_ENDPOINT changes the Hugging Face address (a mirror); HF_TOKEN is sent for gated models.`;

async function run(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, ...names] = positionals;
  if (values.help || command === undefined) {
    process.stdout.write(`${usage}\n`);
    return values.help ? 0 : 2;
  }
  if (command !== 'list' && command !== 'pull') {
    process.stderr.write(`Unknown command '${command}'.\n\n${usage}\n`);
    return 2;
  }

  const config = loadConfig();
  const logger = pino({ level: 'silent' });
  const engine = new NodeLlamaEngine({
    gpu: config.models.localGpu,
    huggingFaceEndpoint: config.models.huggingFaceEndpoint,
    huggingFaceToken: () => config.secrets.get('HF_TOKEN'),
    logger,
  });
  const speech = SpeechEngines.fromConfig(config, 1);
  const registry = new ModelRegistry(config, engine, logger, { speech });
  try {
    if (command === 'list') {
      listModels(registry, values.json);
      return 0;
    }
    return await pullModels(registry, engine, speech, names);
  } finally {
    await engine.close();
    await speech.close();
  }
}

/** The catalog with each model's availability, as text or JSON. */
function listModels(registry: ModelRegistry, json: boolean): void {
  const statuses = registry.list();
  if (json) {
    const rows = statuses.map((status) => ({
      name: status.definition.name,
      provider: status.definition.provider,
      type: status.definition.type,
      default: status.definition.name === registry.defaultModel,
      available: status.available,
      reason: status.reason,
    }));
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  for (const status of statuses) {
    const mark = status.available ? 'available  ' : 'unavailable';
    const isDefault = status.definition.name === registry.defaultModel ? ' (default)' : '';
    process.stdout.write(
      `${mark}  ${status.definition.name}${isDefault}  [${status.definition.provider}, ${status.definition.type}]\n`,
    );
    if (status.reason !== null) process.stdout.write(`             ${status.reason}\n`);
  }
}

/** Pulls the named models (default: the default model); answers the exit code. */
async function pullModels(
  registry: ModelRegistry,
  engine: NodeLlamaEngine,
  speech: SpeechEngines,
  names: readonly string[],
): Promise<number> {
  const wanted = names.length > 0 ? names : [registry.defaultModel ?? ''];
  const targets: LocalModelDefinition[] = [];
  let failures = 0;
  for (const name of wanted) {
    const definition = registry.find(name);
    if (definition === undefined) {
      process.stderr.write(`Model '${name}' is not in the catalog ('npm run models -- list').\n`);
      return 1;
    }
    const connection = connectionOf(definition);
    if (connection.kind === 'engine') {
      failures += await pullEngineFiles(speech, connection.definition);
      continue;
    }
    if (definition.provider !== 'local') {
      process.stderr.write(
        `Model '${name}' is served by ${definition.provider}; there is nothing to download.\n`,
      );
      return 1;
    }
    targets.push(definition);
  }
  for (const definition of targets) failures += await pullLocalModel(engine, definition);
  return failures === 0 ? 0 : 1;
}

/** Downloads one local GGUF model with a progress bar; answers the number of failures. */
async function pullLocalModel(
  engine: NodeLlamaEngine,
  definition: LocalModelDefinition,
): Promise<number> {
  if (definition.source === null) {
    process.stderr.write(
      `Model '${definition.name}' has no 'source'; place its GGUF file at ${definition.file}.\n`,
    );
    return 1;
  }
  const bar = createProgressBar({ label: definition.name });
  try {
    const result = await engine.pull(definition, (progress) => bar.update(progress));
    bar.finish();
    process.stdout.write(`${definition.name}: ${result.path}\n  sha256 ${result.sha256}`);
    process.stdout.write(
      result.checksumSource === 'none'
        ? '  (NOT verified: the source publishes no checksum; set sha256 in the config to pin it)\n'
        : `  (verified against the ${result.checksumSource === 'hub' ? "Hub's published digest" : 'configured sha256'})\n`,
    );
    return 0;
  } catch (error) {
    bar.finish();
    const reason = error instanceof ModelDownloadError ? ` [${error.reason}]` : '';
    process.stderr.write(
      `${definition.name}: download failed${reason}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  }
}

/** Downloads the missing files of a speech engine's model; answers the number of failures. */
async function pullEngineFiles(
  speech: SpeechEngines,
  definition: EngineModelDefinition,
): Promise<number> {
  if (definition.files.length === 0) {
    process.stdout.write(
      `${definition.name}: served by ${definition.provider} on this machine; there is nothing to download.\n`,
    );
    return 0;
  }
  const manual = definition.files.filter((file) => file.source === null && !existsSync(file.file));
  for (const file of manual) {
    process.stderr.write(
      `${definition.name}: its ${file.role} file has no 'source'; place it at ${file.file}.\n`,
    );
  }
  let bar: ReturnType<typeof createProgressBar> | null = null;
  try {
    const results = await speech.pull(definition, (file) => {
      bar?.finish();
      const current = createProgressBar({ label: `${definition.name} ${file.role}` });
      bar = current;
      return (progress) => current.update(progress);
    });
    (bar as ReturnType<typeof createProgressBar> | null)?.finish();
    for (const result of results) {
      process.stdout.write(
        `${definition.name}: ${result.path}\n  sha256 ${result.sha256}${result.checksumSource === 'none' ? '  (NOT verified: the source publishes no checksum; set sha256 in the config to pin it)' : '  (verified)'}\n`,
      );
    }
    if (results.length === 0 && manual.length === 0) {
      process.stdout.write(`${definition.name}: every file is already there.\n`);
    }
    return manual.length;
  } catch (error) {
    (bar as ReturnType<typeof createProgressBar> | null)?.finish();
    const reason = error instanceof ModelDownloadError ? ` [${error.reason}]` : '';
    process.stderr.write(
      `${definition.name}: download failed${reason}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
