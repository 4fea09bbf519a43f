// The `failwise/machines` entry: the XState v5 machines, to embed without the client (docs/embedding.md).
export { requestMachine } from '../machines/request/request.machine.js';
export type {
  AttemptInput,
  AttemptOutput,
  ChooseOriginInput,
  ChooseOriginOutput,
  ReconcileInput,
  ReconcileOutput,
  RefreshAuthInput,
  RefreshAuthOutput,
  RequestMachineContext,
  RequestMachineEmitted,
  RequestMachineEvent,
  RequestMachineInput,
  RequestMachineOutput,
} from '../machines/request/request.types.js';
