import { describeBehaviourOn } from '../support/family-behaviour';

// The shared behaviour suite, every engine on a glide client the test passed in.
describeBehaviourOn('glide');
