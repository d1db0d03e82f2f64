import { describeBehaviourOn } from '../support/family-behaviour';

// The shared behaviour suite, every engine on a iovalkey client the test passed in.
describeBehaviourOn('iovalkey');
