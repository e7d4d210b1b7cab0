// V8 settings of the ingress, set before any of its threads starts.
//
// No memory reducer: V8 runs full collections on a thread that looks idle, to give memory back. The
// scan shipper thread works in bursts (a journal segment every 100 ms) and looked idle between
// them: under a redirect load it ran a full collection every 0.6 s (44 in a 30 s load, 11 without),
// whose marking on V8's helper threads was a fifth of the ingress's CPU per redirect (issue 52).
// Heaps still shrink after the full collections that allocation itself asks for.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--no-memory-reducer');
