// The `failwise/react-native` entry: React Native parts that take the app's own native modules as arguments, so
// that failwise depends on none of them (docs/connectivity.md, docs/recipes.md for a store over AsyncStorage).
export { netInfoConnectivity } from './connectivity/netinfo-connectivity.js';
export type {
  NetInfoConnectivityOptions,
  NetInfoLike,
  NetInfoStateLike,
} from './connectivity/netinfo-connectivity.js';
