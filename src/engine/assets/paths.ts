// Folders that belong to the installed package (not to the current directory), so the
// library, the CLI and the service find the model and the runtime wherever they are
// started from. src/engine/assets/ and dist/engine/assets/ are both three levels below
// the package root.
import { fileURLToPath } from "node:url";

const root = new URL("../../../", import.meta.url);
export const PACKAGE_ROOT = fileURLToPath(root);
export const PACKAGE_MODELS_DIR = fileURLToPath(new URL("models/", root));
export const PACKAGE_WASM_DIR = fileURLToPath(new URL("wasm/", root));
