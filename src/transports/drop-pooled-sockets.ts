import type * as http from 'node:http';
import type { Socket } from 'node:net';

/** Sockets that were in use when the network changed: destroyed once released, never pooled again. */
const staleSockets = new WeakSet<Socket>();
/** Agents that already have the listener below: one per agent, however many changes it sees. */
const watchedAgents = new WeakSet<http.Agent>();

/**
 * Empties an `http.Agent`'s keep-alive pool after a network change: idle sockets are destroyed now, and those in
 * use are destroyed when their request releases them, so no later request rides a connection of the old network.
 * A request in flight keeps its socket until it ends (a write cut mid-way would have an unknown outcome). The
 * agent itself stays usable: the next request opens a new connection.
 */
export function dropPooledSockets(agent: http.Agent): void {
  for (const sockets of Object.values(agent.freeSockets))
    for (const socket of [...(sockets ?? [])]) socket.destroy();
  for (const sockets of Object.values(agent.sockets))
    for (const socket of sockets ?? []) staleSockets.add(socket);
  if (watchedAgents.has(agent)) return;
  watchedAgents.add(agent);
  // The agent's own 'free' listener runs first: it pools the socket, or hands it to a request that was queued
  // for one. Only a pooled (idle) socket is destroyed here; the queued request keeps the one it was given.
  agent.on('free', (socket: Socket) => {
    if (staleSockets.has(socket) && isPooled(agent, socket)) socket.destroy();
  });
}

function isPooled(agent: http.Agent, socket: Socket): boolean {
  return Object.values(agent.freeSockets).some((sockets) => sockets?.includes(socket) === true);
}
