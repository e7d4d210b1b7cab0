// V8 settings of the ingress, set before any of its threads starts.
//
// No memory reducer: V8 runs full collections on a thread that looks idle, to give memory back. The
// scan shipper thread works in bursts (a journal segment every 100 ms) and looked idle between
// them: under a redirect load it ran a full collection every 0.6 s (44 in a 30 s load, 11 without),
// whose marking on V8's helper threads was a fifth of the ingress's CPU per redirect (issue 52).
// Heaps still shrink after the full collections that allocation itself asks for.
//
// No parallel scavenge: each young-generation collection (several a second under load, in the event
// loop and in the shipper thread) woke V8's helper threads to share it. On the two shared cores this
// service is measured on, the hand-offs cost more than they saved: the ingress's CPU per redirect was
// 4-14% lower without them in five paired rounds (issue 52). A scavenge of the small young generation
// (8 MB semi-spaces) stays short on the thread that asks for it.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--no-memory-reducer');
setFlagsFromString('--no-parallel-scavenge');
