// The untyped modules bench/hermes/host-react-native.ts bundles, as React Native installs them.
declare module 'abort-controller/dist/abort-controller' {
  const AbortController: typeof globalThis.AbortController & { AbortSignal: typeof globalThis.AbortSignal };
  export default AbortController;
}

declare module 'react-native/Libraries/Blob/URL' {
  export const URL: typeof globalThis.URL;
  export const URLSearchParams: typeof globalThis.URLSearchParams;
}
