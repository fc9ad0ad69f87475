// Types for the WebAssembly packages that ship none (their shapes as used here).
declare module '@echogarden/espeak-ng-emscripten' {
  const initialise: (options?: object) => Promise<Record<string, unknown>>;
  export default initialise;
}

declare module '@echogarden/fvad-wasm' {
  const initialise: (options?: object) => Promise<Record<string, unknown>>;
  export default initialise;
}
