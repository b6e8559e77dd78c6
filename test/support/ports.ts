export { freePort } from "../../services/core/free-port.js";
