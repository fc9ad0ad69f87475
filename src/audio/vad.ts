// Voice activity detection with WebRTC's VAD (libfvad compiled to WebAssembly,
// @echogarden/fvad-wasm): 20 ms frames of 16 kHz audio in, speech or not out. A frame costs a few
// microseconds, so it runs on the event loop as audio arrives.
interface FvadModule {
  _fvad_new(): number;
  _fvad_free(instance: number): void;
  _fvad_set_mode(instance: number, mode: number): number;
  _fvad_set_sample_rate(instance: number, rate: number): number;
  _fvad_process(instance: number, pointer: number, length: number): number;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  HEAP16: Int16Array;
}

let fvad: Promise<FvadModule> | undefined;

/** The VAD's sample rate and frame. */
export const vadSampleRate = 16_000;
export const vadFrameSamples = 320;

export class VoiceActivityDetector {
  private constructor(
    private readonly module: FvadModule,
    private readonly instance: number,
    private readonly buffer: number,
  ) {}

  static async create(mode: 0 | 1 | 2 | 3): Promise<VoiceActivityDetector> {
    // Loaded with the first voice session, not with the service.
    fvad ??= import('@echogarden/fvad-wasm').then(
      ({ default: initialiseFvad }) => initialiseFvad() as unknown as Promise<FvadModule>,
    );
    const module = await fvad;
    const instance = module._fvad_new();
    if (instance === 0) throw new Error('the voice activity detector could not be created');
    module._fvad_set_mode(instance, mode);
    module._fvad_set_sample_rate(instance, vadSampleRate);
    return new VoiceActivityDetector(module, instance, module._malloc(vadFrameSamples * 2));
  }

  /** Whether a 20 ms frame (320 samples at 16 kHz) holds speech. */
  isSpeech(frame: Int16Array): boolean {
    this.module.HEAP16.set(frame, this.buffer / 2);
    return this.module._fvad_process(this.instance, this.buffer, vadFrameSamples) === 1;
  }

  free(): void {
    this.module._free(this.buffer);
    this.module._fvad_free(this.instance);
  }
}
