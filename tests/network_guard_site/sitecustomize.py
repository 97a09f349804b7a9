# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""Started by every Python child of the test run (PYTHONPATH puts this
directory first): installs ``tests/network_guard.py`` before anything
else runs, then runs any other ``sitecustomize`` this one hides.
"""

import importlib.machinery
import importlib.util
import os
import sys


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _main():
    here = os.path.dirname(os.path.abspath(__file__))
    _load('_image_type_filter_network_guard',
          os.path.join(os.path.dirname(here), 'network_guard.py')).install()
    rest = [p for p in sys.path if os.path.abspath(p or '.') != here]
    spec = importlib.machinery.PathFinder.find_spec('sitecustomize', rest)
    if spec is not None and spec.origin:
        _load('_image_type_filter_hidden_sitecustomize', spec.origin)


_main()
