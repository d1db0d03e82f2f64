import { describeBehaviourOn } from '../support/family-behaviour';

// The shared behaviour suite, every engine on a node-redis5 client the test passed in.
describeBehaviourOn('node-redis5');
