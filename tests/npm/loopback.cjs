// Preloaded into fixture servers: a listen() without a host binds 127.0.0.1, not every interface.
const net = require("net");
const listen = net.Server.prototype.listen;
const isPort = (value) => typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value));
net.Server.prototype.listen = function (...args) {
  if (isPort(args[0]) && (args.length === 1 || typeof args[1] === "function")) {
    args.splice(1, 0, "127.0.0.1");
  } else if (typeof args[0] === "object" && args[0] !== null && args[0].host === undefined && args[0].path === undefined) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
