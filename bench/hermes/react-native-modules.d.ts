// The untyped modules bench/hermes/host-react-native*.ts bundle, as React Native installs them.
declare module 'abort-controller/dist/abort-controller' {
  const AbortController: typeof globalThis.AbortController & { AbortSignal: typeof globalThis.AbortSignal };
  export default AbortController;
}

declare module 'react-native/Libraries/Blob/URL' {
  export const URL: typeof globalThis.URL;
  export const URLSearchParams: typeof globalThis.URLSearchParams;
}

declare module 'react-native/src/private/webapis/dom/abort-api/AbortController' {
  export const AbortController: typeof globalThis.AbortController;
}

declare module 'react-native/src/private/webapis/dom/abort-api/AbortSignal' {
  export const AbortSignal_public: typeof globalThis.AbortSignal;
}

declare module 'react-native/src/private/webapis/dom/events/Event' {
  const Event: typeof globalThis.Event;
  export default Event;
}

declare module 'react-native/src/private/webapis/dom/events/EventTarget' {
  const EventTarget: typeof globalThis.EventTarget;
  export default EventTarget;
}
