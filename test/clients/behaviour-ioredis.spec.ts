import { describeBehaviourOn } from '../support/family-behaviour';

// The shared behaviour suite, every engine on a ioredis client the test passed in.
describeBehaviourOn('ioredis');
