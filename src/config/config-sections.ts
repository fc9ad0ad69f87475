// Sections of the configuration (config.ts) long enough to read apart: the prompt templates of the
// catalog, and the limits and defaults of speech and the real-time voice channels.

export interface TemplateVariable {
  readonly name: string;
  /** Only templates from the config file may require a variable; built-in ones have defaults. */
  readonly required: boolean;
  readonly description: string;
  /** Used when the conversation gives no value; null leaves the variable's sections out. */
  readonly default: string | null;
}

export interface TemplateDefinition {
  readonly name: string;
  readonly displayName: string;
  readonly description: string;
  /** Mustache text: `{{variable}}` and `{{#variable}}…{{/variable}}` sections. */
  readonly systemPrompt: string;
  readonly variables: readonly TemplateVariable[];
  readonly exampleUsage: string;
}

/** Limits and defaults of transcription, synthesis and the real-time voice channels. */
export interface SpeechConfig {
  /** Used when a request names no model (null: the first available of the kind). */
  readonly defaultTranscriptionModel: string | null;
  readonly defaultSpeechModel: string | null;
  /**
   * Whether /v1/audio/* takes OpenAI's model names (`whisper-1`, `tts-1`…) that no model or alias
   * of the catalog has for the default model of the kind, and OpenAI's voice names that a speech
   * model lacks for its default voice.
   */
  readonly openAiAliases: boolean;
  /** Largest audio a transcription takes, after base64 decoding. */
  readonly maxAudioBytes: number;
  readonly maxAudioSeconds: number;
  /** Longest text one synthesis takes. */
  readonly maxSynthesisCharacters: number;
  /** CPU-bound audio work (decoding, resampling, encoding, espeak-ng) runs in these threads. */
  readonly workerThreads: number;
  /**
   * Whether the audio threads start, and load eSpeak NG, with the service (the first synthesis is
   * then ~0.5 s faster) rather than with the first audio request (the idle service ~60 MiB smaller).
   */
  readonly preload: boolean;
  /** How long an engine call may take. */
  readonly engineTimeoutMs: number;
  /**
   * PocketSphinx processes one transcription model runs at once (default: the cores, at least 2);
   * further utterances wait in a bounded queue.
   */
  readonly transcriptionProcesses: number;
  /** Where system programs (PocketSphinx) are looked for: the environment's PATH. */
  readonly programSearchPath: readonly string[];
  readonly realtime: {
    /** How long a voice session's token may wait before its first connection. */
    readonly tokenTtlSeconds: number;
    /** How long a voice session lives after it was created. */
    readonly sessionTtlSeconds: number;
    /** A socket with no message either way for this long is closed (4408). */
    readonly idleTimeoutMs: number;
    /** Largest WebSocket message; larger ones close the socket (1009). */
    readonly maxMessageBytes: number;
    /** Keep-alive pings; a peer that misses two is dropped. */
    readonly pingIntervalMs: number;
    /** How often open sockets re-check their key and session (revocation, expiry). */
    readonly credentialCheckMs: number;
    /**
     * WebSockets one key may hold open at once on this instance, /v1/ws and voice streams together;
     * past it the upgrade answers 429.
     */
    readonly maxConnectionsPerKey: number;
    /** Silence after speech that ends a user turn. */
    readonly endOfSpeechMs: number;
    /** Speech that starts a turn (or interrupts an answer). */
    readonly speechStartMs: number;
    /** WebRTC VAD mode 0 (least aggressive) to 3 (most). */
    readonly vadMode: 0 | 1 | 2 | 3;
    /** Longest user utterance; a longer one is cut into turns. */
    readonly maxUtteranceSeconds: number;
  };
}
