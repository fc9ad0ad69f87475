// The configuration of speech and voice: limits and defaults of transcription and synthesis, the
// audio threads and engines, and the real-time voice channels (`speech` in the config file).
import Type, { type Static } from 'typebox';
import {
  Closed,
  NonEmptyString,
  OptionalInteger,
  requireModel,
  type EnvReader,
  type SectionContext,
} from '../../config/config-kit.js';

const RealtimeFileSchema = Closed({
  token_ttl_seconds: OptionalInteger(5, 3600),
  session_ttl_seconds: OptionalInteger(10, 86_400),
  idle_timeout_ms: OptionalInteger(1000, 3_600_000),
  max_message_bytes: OptionalInteger(1024, 64 * 1024 * 1024),
  ping_interval_ms: OptionalInteger(100, 300_000),
  credential_check_ms: OptionalInteger(50, 1000),
  max_connections_per_key: OptionalInteger(1, 100_000),
  end_of_speech_ms: OptionalInteger(100, 5000),
  speech_start_ms: OptionalInteger(20, 2000),
  vad_mode: Type.Optional(
    Type.Union([Type.Literal(0), Type.Literal(1), Type.Literal(2), Type.Literal(3)]),
  ),
  max_utterance_seconds: OptionalInteger(1, 600),
});

export const SpeechFileSchema = Closed({
  default_transcription_model: Type.Optional(NonEmptyString()),
  default_speech_model: Type.Optional(NonEmptyString()),
  max_audio_bytes: OptionalInteger(1024, 200 * 1024 * 1024),
  max_audio_seconds: OptionalInteger(1, 3600),
  max_synthesis_characters: OptionalInteger(1, 100_000),
  worker_threads: OptionalInteger(1, 64),
  preload: Type.Optional(Type.Boolean()),
  engine_timeout_ms: OptionalInteger(100, 600_000),
  transcription_processes: OptionalInteger(1, 64),
  /** Whether /v1/audio/* takes OpenAI's model and voice names for the defaults. */
  openai_aliases: Type.Optional(Type.Boolean()),
  /** Whether a file that lists models keeps the built-in offline engines of the kinds it lacks. */
  builtin_engines: Type.Optional(Type.Boolean()),
  realtime: Type.Optional(RealtimeFileSchema),
});

type SpeechFile = Static<typeof SpeechFileSchema>;

/** The environment's speech settings: the WebSocket limit per key, and where programs are found. */
export function readSpeechEnv(env: EnvReader, pathDelimiter: string) {
  return {
    maxConnectionsPerKey: env.integer('WS_MAX_CONNECTIONS_PER_KEY', 1, 100_000),
    programSearchPath: (env.raw('PATH') ?? '').split(pathDelimiter).filter((entry) => entry !== ''),
  };
}

/** Speech and voice: the file's settings, else the defaults (some from the number of cores). */
export function speechConfig(
  fromEnv: ReturnType<typeof readSpeechEnv>,
  file: SpeechFile = {},
  context: SectionContext & { cores: number },
) {
  const defaultTranscriptionModel = file.default_transcription_model ?? null;
  const defaultSpeechModel = file.default_speech_model ?? null;
  if (defaultTranscriptionModel !== null) {
    requireModel(
      context,
      'speech.default_transcription_model',
      defaultTranscriptionModel,
      'transcription',
    );
  }
  if (defaultSpeechModel !== null) {
    requireModel(context, 'speech.default_speech_model', defaultSpeechModel, 'speech');
  }
  const { cores } = context;
  return {
    defaultTranscriptionModel,
    defaultSpeechModel,
    openAiAliases: file.openai_aliases ?? true,
    maxAudioBytes: file.max_audio_bytes ?? 25 * 1024 * 1024,
    maxAudioSeconds: file.max_audio_seconds ?? 600,
    maxSynthesisCharacters: file.max_synthesis_characters ?? 5000,
    workerThreads: file.worker_threads ?? Math.max(1, Math.min(4, cores - 1)),
    preload: file.preload ?? false,
    engineTimeoutMs: file.engine_timeout_ms ?? 60_000,
    transcriptionProcesses: file.transcription_processes ?? Math.max(2, cores),
    programSearchPath: fromEnv.programSearchPath,
    realtime: realtimeConfig(fromEnv.maxConnectionsPerKey, file.realtime),
  };
}

function realtimeConfig(
  maxConnectionsPerKey: number | undefined,
  file: Static<typeof RealtimeFileSchema> = {},
) {
  return {
    tokenTtlSeconds: file.token_ttl_seconds ?? 120,
    sessionTtlSeconds: file.session_ttl_seconds ?? 3600,
    idleTimeoutMs: file.idle_timeout_ms ?? 120_000,
    maxMessageBytes: file.max_message_bytes ?? 1024 * 1024,
    pingIntervalMs: file.ping_interval_ms ?? 20_000,
    credentialCheckMs: file.credential_check_ms ?? 250,
    maxConnectionsPerKey: maxConnectionsPerKey ?? file.max_connections_per_key ?? 20,
    endOfSpeechMs: file.end_of_speech_ms ?? 300,
    speechStartMs: file.speech_start_ms ?? 40,
    vadMode: file.vad_mode ?? 3,
    maxUtteranceSeconds: file.max_utterance_seconds ?? 30,
  };
}
