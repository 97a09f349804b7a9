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

"""The demo: a mixed fleet reported into an embedded Placement by the real
reporter, then asked for hosts by the real request filters.

The only package that uses both halves; it registers the ``demo`` command
of ``image-type-filter`` through an entry point of its own distribution
(image-type-filter-demo, ``demo/``), so the scheduler side never imports
it and the product's wheel does not carry it.
"""
